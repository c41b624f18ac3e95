"""How judge calls run: the verdict cache, the scheduler (one asyncio loop in one thread),
retries with backoff, a sample's job, and what a call reserves in the budget."""
