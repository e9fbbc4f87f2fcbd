"""Model helpers shared by sampling, DPO response generation and training."""
