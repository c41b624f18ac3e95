"""What calls cost: prices (genai-prices), token counts, the run's budget and its xdist broker,
spending and usage. No pydantic-ai here."""
