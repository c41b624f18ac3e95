"""The judge call alone: LLMJudge capture and replay, the request as the judge sees it, verdict
parsing, single and pairwise answers, and deterministic checks."""
