"""Generation backends (openai-compatible HTTP, offline vLLM in a subprocess, transformers)."""

from pipeline.sampling.backends.base import Backend, Generation, GenerationRequest, GenerationResult

__all__ = ["Backend", "Generation", "GenerationRequest", "GenerationResult"]
