"""The offline judge: local model specs, the packaged GGUF file, the llama.cpp server process."""
