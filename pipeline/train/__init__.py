"""The training stage: verifier trainers (GRPO, DPO, SFT) and code-policy RLVR with TRL."""

from pipeline.train.config import TrainConfig
from pipeline.train.run import train

__all__ = ["TrainConfig", "train"]
