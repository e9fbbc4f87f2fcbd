"""Adversarial bias edits (Adv, Mixed): the catalogue, the edits, their checks, the re-judge."""

from pipeline.instances.adversarial.catalogue import BY_NAME, CATALOGUE, BiasType, bias_types

__all__ = ["BY_NAME", "CATALOGUE", "BiasType", "bias_types"]
