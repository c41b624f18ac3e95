"""The system under test of the release example: a tiny, deterministic vital-signs extractor."""
