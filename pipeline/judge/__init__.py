"""The judge stage: every candidate through the sandbox's batch `judge`, verdict columns out."""
