"""Tiny local code policies: small causal LMs fitted on the CPU in seconds, no downloads.

No pretrained weights can be fetched here, so the demo's weak and strong policy pools and
the RLVR tests use models fitted on the spot on (prompt, program) pairs: the sampling
stage's own chat prompt for a problem in, a fenced program out. They are real
`transformers` models (the Llama-like Granite architecture, whose `AutoTokenizer` entry
loads our `tokenizer.json` as written, unlike Qwen2's, which rebuilds a BPE; a ChatML
template) loaded by the same backend code a real run uses, and they write real programs
through prompt -> completion -> extraction -> sandbox.

Why a line-level tokenizer: each distinct source line (indentation and newline included)
is one token, so a model of a few hundred thousand parameters learns to write whole
programs in a few hundred steps on two cores (a character-level model of 1.9M parameters
fitted for 3 minutes wrote a program that parses 1 time in 6). Sampled at a temperature,
it mostly reproduces a program it saw (usually AC) and sometimes splices in a line of
another solution or language (WA, RE or CE). Lines never seen in fitting map to <unk>:
the model can read them in a prompt but never writes them.

A fit is a pure function of (PolicyFit, the examples, the fitting code): its content key
is stored in `fit.json` and a directory holding the same key is reused as is (`fit_policy`
alone; the pipeline runs it as the FIT_POLICY stage, pipeline/models/stage.py, whose marker
`fit.json` keeps this record as its stats: `read_fit` reads either). The fitting
code enters the key as FIT_CODE_VERSION, not as this file's bytes, so an edit that leaves
the fitted weights alone (a comment, a docstring, a new helper) leaves every build id alone;
tests/models/test_fit_version.py fails when the fitting code changes without a bump.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pipeline.common import progress
from pipeline.models.config import PolicyFit
from pipeline.models.tiny import CHATML_TEMPLATE

FIT_FILE = "fit.json"
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
UNK = "<unk>"
_LINE_PATTERN = r"[^\n]*\n|[^\n]+"  # a line with its newline, or a last line without one
# The fitting code's version, in every fit key and so in every build id (via the sampled
# policy's revision `fit-<spec_digest>`). Pinned to the sha256 prefix this file had when the
# file's bytes were hashed instead, so the build ids did not move. Bump it (any value not used
# before) when a change to the fitting code can change the weights, and re-record
# tests/models/test_fit_version.py's FITTING_CODE_DIGEST.
FIT_CODE_VERSION = "6fd5ba04233fa9ee"


@dataclass(frozen=True)
class Example:
    """One fitting pair: chat messages in, the assistant's reply (a fenced program) out."""

    messages: list[dict[str, str]]
    completion: str


def fenced(code: str, language: str) -> str:
    from pipeline.sampling.prompts import FENCE_TAGS

    return f"```{FENCE_TAGS[language]}\n{code.rstrip()}\n```"


def examples_from_problems(problems: Iterable, spec: PolicyFit) -> list[Example]:
    """The sampling prompt of each (problem, language) paired with each reference solution."""
    from pipeline.sampling.prompts import chat_messages

    out = []
    for p in problems:
        for s in p.solutions:
            if s.language not in spec.languages or not (s.correct or spec.include_wrong):
                continue
            if p.test_mode == "function" and s.language != "python":
                continue
            out.append(Example(chat_messages(p, s.language), fenced(s.code, s.language)))
    if not out:
        raise ValueError(
            f"policy {spec.name}: no reference solutions in {spec.languages} to fit on "
            f"(include_wrong={spec.include_wrong})"
        )
    return out


def _module_digest() -> str:
    """The fitting code's part of a fit's identity (a pinned version, see FIT_CODE_VERSION)."""
    return FIT_CODE_VERSION


def spec_digest(spec: PolicyFit) -> str:
    """What decides the model apart from its examples: the fit settings and this code."""
    body = spec.model_dump(mode="json", exclude={"dir", "name"})
    return hashlib.sha256(
        json.dumps([body, _module_digest()], sort_keys=True).encode()
    ).hexdigest()[:16]


def fit_key(spec: PolicyFit, examples: Sequence[Example]) -> str:
    h = hashlib.sha256(spec_digest(spec).encode())
    for ex in examples:
        h.update(json.dumps([ex.messages, ex.completion], sort_keys=True).encode())
    return h.hexdigest()[:16]


def line_tokenizer(texts: Iterable[str]):  # -> PreTrainedTokenizerFast
    """A word-level tokenizer whose words are whole lines of `texts` (plus the ChatML specials)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    split = pre_tokenizers.Split(Regex(_LINE_PATTERN), behavior="isolated")
    lines: set[str] = set()
    for t in texts:
        for part in t.split("<|im_start|>"):
            for piece in part.split("<|im_end|>"):
                lines.update(s for s, _ in split.pre_tokenize_str(piece))
    vocab = {tok: i for i, tok in enumerate([*SPECIALS, UNK, *sorted(lines)])}
    core = Tokenizer(models.WordLevel(vocab, unk_token=UNK))
    core.pre_tokenizer = split
    core.decoder = decoders.Fuse()  # tokens carry their own newlines: join them as they are
    tok = PreTrainedTokenizerFast(
        tokenizer_object=core,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        unk_token=UNK,
        additional_special_tokens=["<|im_start|>"],
        clean_up_tokenization_spaces=False,
    )
    tok.chat_template = CHATML_TEMPLATE
    return tok


def _sequences(tok, examples: Sequence[Example]) -> list[tuple[list[int], int]]:
    """(token ids, prompt length) per example: the prompt is not scored, the reply and EOS are."""
    out = []
    for ex in examples:
        prompt = tok.apply_chat_template(ex.messages, tokenize=False, add_generation_prompt=True)
        p_ids = tok.encode(prompt, add_special_tokens=False)
        c_ids = tok.encode(ex.completion, add_special_tokens=False) + [tok.eos_token_id]
        out.append((p_ids + c_ids, len(p_ids)))
    return out


def fit_policy(spec: PolicyFit, examples: Sequence[Example]) -> Path:
    """Fit (or reuse) the policy in `spec.dir`; returns the directory."""
    key = fit_key(spec, examples)
    out = Path(spec.dir)
    marker = out / FIT_FILE
    if marker.exists() and json.loads(marker.read_text()).get("key") == key:
        return out

    import time

    from pipeline.common.cpu import building_models, pin_cpu_kernels, torch_threads

    kernels = pin_cpu_kernels()  # before any torch work: the same weights on any x86 CPU

    import torch
    from transformers import GraniteConfig, GraniteForCausalLM

    t0, cpu0 = time.perf_counter(), time.process_time()
    tok = line_tokenizer(_render(ex.messages) + ex.completion for ex in examples)
    seqs = _sequences(tok, examples)
    if any(tok.unk_token_id in ids for ids, _ in seqs):  # every fitted line is in the vocabulary
        raise RuntimeError(f"policy {spec.name}: a fitted line fell outside the vocabulary (a bug)")
    config = GraniteConfig(
        vocab_size=len(tok),
        hidden_size=spec.hidden_size,
        intermediate_size=spec.hidden_size * 2,
        num_hidden_layers=spec.num_layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max(len(ids) for ids, _ in seqs) + 256,
        tie_word_embeddings=True,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        bos_token_id=tok.convert_tokens_to_ids("<|im_start|>"),
    )
    # Seeding and initialising under one lock: the global RNG and transformers' build
    # patches are process-wide, and another fit may be starting on the next thread.
    with building_models():
        torch.manual_seed(spec.seed)
        model = GraniteForCausalLM(config).to(spec.device)
    width = max(len(ids) for ids, _ in seqs)
    ids = torch.full((len(seqs), width), tok.pad_token_id, dtype=torch.long)
    labels = torch.full((len(seqs), width), -100, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (s, n_prompt) in enumerate(seqs):  # right padding; only the reply is scored
        ids[i, : len(s)] = torch.tensor(s)
        labels[i, n_prompt : len(s)] = torch.tensor(s[n_prompt:])
        mask[i, : len(s)] = 1
    ids, labels, mask = ids.to(spec.device), labels.to(spec.device), mask.to(spec.device)
    opt = torch.optim.AdamW(model.parameters(), lr=spec.learning_rate, weight_decay=0.0)
    order = torch.Generator().manual_seed(spec.seed)
    model.train()
    last = torch.tensor(float("nan"))
    # One thread: the same float reductions on any machine (the weights do not depend on the
    # core count), and on a shared 2-core box it is no slower than fighting for both cores;
    # two fits then also run side by side, one per core.
    tracker = progress.track("steps", spec.steps)
    with torch_threads(1):
        for _ in range(spec.steps):
            pick = torch.randperm(len(seqs), generator=order)[: spec.batch_size].to(spec.device)
            loss = model(input_ids=ids[pick], attention_mask=mask[pick], labels=labels[pick]).loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            last = loss.detach()  # read once at the end: a read per step would stall a GPU
            tracker.advance()
        loss_value = float(last)
    model = model.to("cpu").eval()  # saved from the CPU: the same files whatever fitted it
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.pad_token_id = tok.pad_token_id

    # Written beside the target and renamed into place: a crash never leaves half a model.
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    tok.save_pretrained(tmp)
    model.save_pretrained(tmp)
    weights = hashlib.sha256((tmp / "model.safetensors").read_bytes()).hexdigest()[:16]
    meta = {
        "key": key,
        "name": spec.name,
        "spec": spec.model_dump(mode="json", exclude={"dir"}),
        "examples": len(examples),
        "vocab_size": len(tok),
        "parameters": sum(p.numel() for p in model.parameters()),
        "final_loss": round(loss_value, 4),
        "fit_seconds": round(time.perf_counter() - t0, 1),
        "fit_cpu_seconds": round(time.process_time() - cpu0, 1),
        "weights_sha256": weights,
        "cpu_kernels": kernels,  # the PyTorch CPU kernels the floats came from
    }
    (tmp / FIT_FILE).write_text(json.dumps(meta, indent=2))
    if out.exists():
        shutil.rmtree(out)
    tmp.rename(out)
    return out


def fit_on_problems(problems: Iterable, spec: PolicyFit) -> Path:
    """Fit (or reuse) a policy on the reference solutions of `problems` (schemas.Problem),
    through the stage runner (FIT_POLICY in pipeline/models/stage.py)."""
    from pipeline.models.stage import fit_examples

    return fit_examples(spec, examples_from_problems(problems, spec))


def read_fit(path: str | Path) -> dict:
    """The fit record of a fitted policy folder (key, sizes, loss, weights hash): the stats
    of FIT_POLICY's marker `fit.json`, or the whole file when `fit_policy` was called alone."""
    marker = Path(path) / FIT_FILE
    if not marker.exists():
        raise FileNotFoundError(f"{path}: no {FIT_FILE}; not a fitted policy folder")
    record = json.loads(marker.read_text())
    return record["stats"] if {"stage", "stats"} <= record.keys() else record


def _render(messages: list[dict[str, str]]) -> str:
    """The ChatML text of `messages` with the generation prompt (what CHATML_TEMPLATE renders)."""
    body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return body + "<|im_start|>assistant\n"
