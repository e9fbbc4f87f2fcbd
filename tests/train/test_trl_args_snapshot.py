"""The TRL config fields pipeline/train builds, pinned: every shipped training config, every
zoo cell (LoRA on and off), every ablation and RLVR-study cell, each method's defaults and a
spread of variants give the same TRL kwargs (value and type: 1 and 1.0 differ) and the same
cache keys (`ablation.train_fingerprint`, the dump's hash, a RAFT / STaR / ReST-EM episode's
samples fingerprint) as in trl_args_snapshot.json.

The snapshot was written from the code before TRL's fields were derived from TRL's own config
classes; regenerate it (`python tests/train/test_trl_args_snapshot.py --write`) only for a
change meant to alter what TRL receives, and say so in the commit.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("trl_args_snapshot.json")
TRL_CLASS = {"grpo": "GRPOConfig", "rlvr": "GRPOConfig", "dpo": "DPOConfig", "sft": "SFTConfig",
             "raft": "SFTConfig", "star": "SFTConfig", "restem": "SFTConfig"}  # fmt: skip
DATA_CONFIG = {"grpo": "train", "dpo": "dpo", "sft": "dpo", "raft": "train", "star": "train",
               "restem": "train", "rlvr": "train_questions"}  # fmt: skip


def _minimal(method: str, **more: Any) -> dict[str, Any]:
    return {"method": method, "model": "MODEL", "output_dir": "OUT",
            "data": {"dir": "DATA", "config": DATA_CONFIG[method]}, **more}  # fmt: skip


LORA = {"r": 8, "alpha": 16}
VARIANTS: dict[str, dict[str, Any]] = {
    "grpo-vllm-server": _minimal("grpo", grpo={"vllm": {"enabled": True, "server_port": 8123}}),
    "grpo-vllm-server-url": _minimal(
        "grpo", grpo={"vllm": {"enabled": True, "server_base_url": "http://h:1"}}
    ),
    "grpo-vllm-colocate": _minimal(
        "grpo", grpo={"vllm": {"enabled": True, "mode": "colocate", "tensor_parallel_size": 2}}
    ),
    "grpo-every-knob": _minimal(
        "grpo",
        grpo={
            "num_generations": 4,
            "max_completion_length": 100,
            "temperature": 0.7,
            "top_p": 0.9,
            "beta": 0,
            "sync_ref_model": False,
            "ref_model_sync_steps": 5,
            "ref_model_mixup_alpha": 0.5,
            "loss_type": "grpo",
            "importance_sampling_level": "sequence",
            "epsilon": 3e-4,
            "epsilon_high": None,
            "mask_truncated_completions": False,
            "scale_rewards": "batch",
            "rewards": {"accuracy": 2, "format": 0.5},
            "generate_every": 4,
        },
        optim={"gradient_accumulation_steps": 3},
    ),
    "optim-every-knob": _minimal(
        "grpo",
        optim={
            "learning_rate": 3,
            "max_steps": 7,
            "num_train_epochs": 2,
            "per_device_train_batch_size": 2,
            "gradient_accumulation_steps": 2,
            "warmup_ratio": 0,
            "lr_scheduler_type": "linear",
            "lr_scheduler_kwargs": {"a": 1},
            "weight_decay": 0,
            "max_grad_norm": 2,
            "bf16": True,
            "gradient_checkpointing": True,
            "logging_steps": 5,
            "save_steps": 3,
            "save_total_limit": None,
            "seed": 7,
            "dataloader_drop_last": False,
            "use_cpu": True,
        },
    ),
    "optim-yaml-strings": _minimal("dpo", optim={"learning_rate": "1e-6", "save_steps": "0.5"}),
    "dpo-sync-ref": _minimal(
        "dpo",
        dpo={
            "beta": 1,
            "max_length": None,
            "loss_type": ["sigmoid", "bco_pair"],
            "precompute_ref_log_probs": False,
            "precompute_ref_batch_size": 3,
            "sync_ref_model": True,
            "ref_model_sync_steps": 10,
            "ref_model_mixup_alpha": 0.6,
        },
    ),
    "sft-curriculum": _minimal(
        "sft",
        sft={
            "dataset": "some/ds",
            "curriculum_column": "stage",
            "max_length": None,
            "completion_only_loss": False,
        },
    ),
    "sft-dataset-no-curriculum": _minimal("sft", sft={"dataset": "some/ds"}),
    "raft-knobs": _minimal("raft", raft={"max_length": 5000, "completion_only_loss": False}),
    "star-knobs": _minimal("star", star={"max_length": 7000, "train_from": "previous"}),
    "rlvr-gspo": _minimal("rlvr", rlvr={"algorithm": "gspo"}),
    "rlvr-gspo-loss": _minimal(
        "rlvr",
        rlvr={
            "algorithm": "gspo",
            "loss_type": "dr_grpo",
            "epsilon_high": 0.3,
            "enable_thinking": None,
        },
    ),
    "rlvr-vllm": _minimal("rlvr", rlvr={"vllm": {"enabled": True}, "enable_thinking": True}),
    "overrides": _minimal(
        "grpo", trainer_overrides={"save_strategy": "no", "max_steps": 3, "optim": "adamw_torch"}
    ),
    "overrides-chat-template": _minimal(
        "grpo", trainer_overrides={"chat_template_kwargs": {"enable_thinking": False}}
    ),
}


def configs() -> Iterator[tuple[str, Any]]:
    """(case id, TrainConfig) for every case."""
    from pipeline.policy_eval.config import StudyConfig
    from pipeline.policy_eval.study import train_config as study_cell
    from pipeline.train.ablation import train_config as ablation_cell
    from pipeline.train.ablation_config import AblationConfig
    from pipeline.train.config import TrainConfig
    from pipeline.train.recipes import cell_config, grid

    for path in sorted((REPO / "configs" / "train").glob("*.yaml")):
        yield f"configs/train/{path.name}", TrainConfig.from_yaml(path)
    for cell in grid():
        yield f"zoo/{cell.name}", cell_config(cell, data_dir="DATA")
    for path in sorted((REPO / "configs" / "ablation").glob("*.yaml")):
        ablation = AblationConfig.from_yaml(path)
        for entry in ablation.recipes:
            yield f"configs/ablation/{path.name}/{entry}", ablation_cell(ablation, entry)
    for path in sorted((REPO / "configs" / "rlvr").glob("*.yaml")):
        study = StudyConfig.from_yaml(path)
        for reward, algorithm in study.runs():
            yield (f"configs/rlvr/{path.name}/{reward}-{algorithm}",
                   study_cell(study, reward, algorithm, "MODEL", Path("DATA"), "VERIFIER"))  # fmt: skip
    for method in TRL_CLASS:
        yield f"defaults/{method}", TrainConfig.model_validate(_minimal(method))
        if method not in ("grpo", "dpo"):  # their defaults re-sync the reference: no LoRA
            yield f"defaults/{method}-lora", TrainConfig.model_validate(_minimal(method, lora=LORA))
    for method in ("grpo", "dpo"):
        section = {"sync_ref_model": False}
        yield (f"defaults/{method}-lora",
               TrainConfig.model_validate(_minimal(method, lora=LORA, **{method: section})))  # fmt: skip
    for name, fields in VARIANTS.items():
        yield f"variant/{name}", TrainConfig.model_validate(fields)


def trl_kwargs(cfg: Any) -> dict[str, Any]:
    """What the method's TRL config class is given (bar output_dir, a run's own path)."""
    from pipeline.train.common import base_trainer_args, with_overrides

    method = cfg.method
    if method == "rlvr":
        from pipeline.train.rlvr import rlvr_args

        args = with_overrides(rlvr_args(cfg), cfg)
    elif method in ("raft", "star", "restem"):
        from pipeline.train.raft import episode_sft_args
        from pipeline.train.self_training import as_raft

        view = as_raft(cfg)
        args = with_overrides(base_trainer_args(view) | episode_sft_args(view), view)
    else:
        from pipeline.train import verifier

        own = {"grpo": verifier.grpo_args, "dpo": verifier.dpo_args, "sft": verifier.sft_args}
        args = with_overrides(base_trainer_args(cfg) | own[method](cfg), cfg)
    args.pop("output_dir")
    return args


def record(cfg: Any) -> dict[str, Any]:
    from pipeline.common.hashing import canonical_json, sha256_text
    from pipeline.train.ablation import train_fingerprint

    out: dict[str, Any] = {}
    if cfg.method in ("raft", "star", "restem"):  # the key an episode's samples are reused by
        from pipeline.train.raft import generation_fingerprint
        from pipeline.train.self_training import as_raft

        out["samples_fingerprint"] = generation_fingerprint(as_raft(cfg), 0, "MODEL")
    return out | {
        "trl_class": TRL_CLASS[cfg.method],
        "kwargs": trl_kwargs(cfg),
        "train_fingerprint": train_fingerprint(cfg),
        "dump_sha": sha256_text(canonical_json(cfg.model_dump(mode="json")))[:16],
    }


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, indent=1)  # keeps 1 and 1.0 apart


def test_trl_kwargs_and_cache_keys_match_the_snapshot() -> None:
    want = json.loads(SNAPSHOT.read_text())
    got = {case: record(cfg) for case, cfg in configs()}
    assert sorted(got) == sorted(want), "cases changed: regenerate only on purpose"
    wrong = [case for case in want if _text(got[case]) != _text(want[case])]
    if wrong:
        case = wrong[0]
        assert _text(got[case]) == _text(want[case]), f"{len(wrong)} cases differ: {wrong}"
    assert len(want) >= 80  # every shipped config, zoo cell and variant is here


if __name__ == "__main__":  # python tests/train/test_trl_args_snapshot.py --write
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/train/test_trl_args_snapshot.py --write")
    cases = {case: record(cfg) for case, cfg in configs()}
    SNAPSHOT.write_text(json.dumps(cases, sort_keys=True, indent=1) + "\n")
    print(f"wrote {len(cases)} cases to {SNAPSHOT}")
