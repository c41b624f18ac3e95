"""The benchmark suite as files: line-aware YAML, detection, the file models and their vocabulary,
loading, prompt-file sections, run settings. Imports nothing else of the package."""
