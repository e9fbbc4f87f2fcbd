"""FIT_POLICY and TINY_MODEL as `Stage` values run by the runner: their declared outputs are
what they wrote, the fit record is the marker's stats, the stage fits the same bytes as
`fit_policy` alone, a fit killed mid-way (SIGKILL in a child process, so nothing after the
kill point runs) leaves no half model and no marker, and another tiny-model seed rebuilds.

Real fits and real tiny models (a few steps, a few seconds each)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from pipeline.common.runner import run_stage
from pipeline.models.policy import (
    FIT_FILE,
    examples_from_problems,
    fit_key,
    fit_on_problems,
    fit_policy,
    read_fit,
)
from pipeline.models.stage import FIT_POLICY, TINY_MODEL, FitCall, TinyModelCall
from pipeline.models.tiny import build_tiny_model
from tests.models.test_policy import _problems, _spec

REPO = Path(__file__).resolve().parents[2]
MODEL_FILES = ("config.json", "tokenizer.json", "model.safetensors")


def _bytes(folder: Path) -> dict[str, bytes]:
    return {f: (folder / f).read_bytes() for f in MODEL_FILES}


def test_fit_outputs_match_what_it_wrote_and_the_bytes_of_a_plain_fit(tmp_path: Path) -> None:
    spec = _spec(tmp_path, "p")
    examples = examples_from_problems(_problems(), spec)
    call = FitCall(spec=spec, examples=tuple(examples))
    result = run_stage(FIT_POLICY, call, {}, spec.dir)
    declared = FIT_POLICY.outputs(call, spec.dir)
    assert result.outputs == {name: str(path) for name, path in declared.items()}
    assert all(p.is_file() for p in declared.values())
    assert not result.cached
    # The marker is fit.json; its stats are the fit record, which read_fit returns.
    marker = json.loads((spec.dir / FIT_FILE).read_text())
    assert marker["stage"] == "fit-policy" and marker["stats"] == result.stats
    assert read_fit(spec.dir) == result.stats
    assert result.stats["key"] == fit_key(spec, examples)
    assert result.stats["spec"]["name"] == "p" and "dir" not in result.stats["spec"]
    # Nothing left beside it: the runner's sibling and fit_policy's own temp folder are gone.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]
    # The stage changes where the fit is cached, not what is fitted.
    plain = fit_policy(_spec(tmp_path / "plain", "p"), examples)
    assert _bytes(plain) == _bytes(spec.dir)
    assert run_stage(FIT_POLICY, call, {}, spec.dir).cached


def test_the_fit_key_holds_the_examples_and_settings_not_the_folder(tmp_path: Path) -> None:
    a = fit_on_problems(_problems(), _spec(tmp_path, "a"))
    stamp = (a / FIT_FILE).stat().st_mtime_ns
    fit_on_problems(_problems(), _spec(tmp_path, "a"))
    assert (a / FIT_FILE).stat().st_mtime_ns == stamp  # reused
    # More examples (the wrong reference too): refitted in place.
    fit_on_problems(_problems(), _spec(tmp_path, "a", include_wrong=True))
    assert read_fit(a)["examples"] == 2 and (a / FIT_FILE).stat().st_mtime_ns != stamp


def _kill_mid_fit(root: Path, steps: int) -> subprocess.CompletedProcess[str]:
    """Fit policy `a` under `root` in a fresh interpreter that kills itself when the model is
    being saved (the tokenizer is already written: a half model on disk)."""
    code = (
        "import os, signal, sys\n"
        "from pathlib import Path\n"
        "from transformers import GraniteForCausalLM\n"
        "GraniteForCausalLM.save_pretrained = "
        "lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from pipeline.models.policy import fit_on_problems\n"
        "from tests.models.test_policy import _problems, _spec\n"
        "fit_on_problems(_problems(), _spec(Path(sys.argv[1]), 'a', steps=int(sys.argv[2])))\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(root), str(steps)],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_a_fit_killed_mid_way_leaves_no_half_model_and_no_marker(tmp_path: Path) -> None:
    a = tmp_path / "a"
    child = _kill_mid_fit(tmp_path, steps=5)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert not a.exists()  # nothing at the target: no half model, no marker
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers and any((p / "tokenizer.json").exists() for p in leftovers)  # the half

    fit_on_problems(_problems(), _spec(tmp_path, "a"))  # the rerun fits, and cleans up
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
    before, record = _bytes(a), read_fit(a)

    # A refit with other settings killed mid-way keeps the finished fit, marker included.
    child = _kill_mid_fit(tmp_path, steps=6)
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert _bytes(a) == before and read_fit(a) == record

    fit_on_problems(_problems(), _spec(tmp_path, "a", steps=6))
    assert read_fit(a)["spec"]["steps"] == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]


def test_tiny_model_outputs_match_what_it_wrote(tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    call = TinyModelCall(seed=3)
    result = run_stage(TINY_MODEL, call, {}, out)
    declared = TINY_MODEL.outputs(call, out)
    assert result.outputs == {name: str(path) for name, path in declared.items()}
    assert all(p.is_file() for p in declared.values())
    assert json.loads(declared["record"].read_text())["seed"] == 3
    assert result.stats["seed"] == 3 and len(result.stats["weights_sha256"]) == 16
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny"]


def test_tiny_model_with_another_seed_is_rebuilt(tmp_path: Path) -> None:
    out = tmp_path / "tiny"
    build_tiny_model(out, seed=0)
    first = _bytes(out)
    stamp = (out / "model.safetensors").stat().st_mtime_ns
    assert build_tiny_model(out, seed=0) == out
    assert (out / "model.safetensors").stat().st_mtime_ns == stamp  # same settings: reused

    build_tiny_model(out, seed=1)  # once reused as is; now another model
    assert json.loads((out / "aletheia_tiny.json").read_text())["seed"] == 1
    assert _bytes(out)["model.safetensors"] != first["model.safetensors"]
    build_tiny_model(tmp_path / "again", seed=0)  # and the same seed gives the same bytes
    assert _bytes(tmp_path / "again") == first

    # A folder built before the runner (no marker) is rebuilt once, not trusted.
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "config.json").write_text("{}")
    (legacy / "tokenizer.json").write_text("{}")
    build_tiny_model(legacy, seed=0)
    assert _bytes(legacy) == first
