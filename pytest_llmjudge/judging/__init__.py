"""The only package that imports pydantic-ai and pydantic-evals: models, LLMJudge capture and
replay, verdicts, retries, the verdict cache, the scheduler and the run's judging service."""
