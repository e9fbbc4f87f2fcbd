"""Finished generations of an evaluation, kept as they arrive so a crash loses none of them.

`<out>/generations.partial.jsonl` gets one line per finished prompt (its request id, a digest
of the model and the whole request, the texts and finish reasons), flushed at once. A run
started again with the same out folder reuses every line whose digest still matches (same
model name, prompt, seed, sampling settings, budget) and generates only the rest; the file is
removed once the responses file is written. A line cut short by the crash is dropped.

With the transformers backend's generate decoder, resumed prompts land in other batches than
they would have, so their samples differ from an uninterrupted run's (each is still a sample
of the same model under the same settings).
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import IO

from pipeline.sampling.backends.base import GenerationRequest, GenerationResult

log = logging.getLogger(__name__)

FILE_NAME = "generations.partial.jsonl"


def request_digest(model: str, request: GenerationRequest) -> str:
    return hashlib.sha256((model + "\x00" + request.model_dump_json()).encode()).hexdigest()[:32]


class GenerationLog:
    """The partial file of one evaluation (see the module doc)."""

    def __init__(self, out_dir: str | Path, model: str) -> None:
        self.path = Path(out_dir) / FILE_NAME
        self.model = model
        self._kept: dict[str, dict] = {}  # request_id -> line
        if self.path.is_file():
            for line in self.path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue  # the line the crash cut
                self._kept[entry["request_id"]] = entry
        self._file: IO[str] | None = None

    def reuse(
        self, requests: list[GenerationRequest]
    ) -> tuple[list[GenerationRequest], dict[str, tuple[list[str], list[str]]]]:
        """The requests still to generate, and the (texts, finish reasons) of the others; the
        file is rewritten with the reused lines only."""
        todo, done = [], {}
        for q in requests:
            entry = self._kept.get(q.request_id)
            if entry is not None and entry["digest"] == request_digest(self.model, q):
                done[q.request_id] = (entry["texts"], entry["finish_reasons"])
            else:
                todo.append(q)
        if done:
            log.info("%s: reusing %d finished prompts, %d to go", self.path, len(done), len(todo))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")
        for rid in done:
            self._file.write(json.dumps(self._kept[rid], ensure_ascii=False) + "\n")
        self._file.flush()
        self._digests = {q.request_id: request_digest(self.model, q) for q in todo}
        return todo, done

    def add(self, result: GenerationResult) -> None:
        assert self._file is not None, "reuse() first"
        entry = {
            "request_id": result.request_id,
            "digest": self._digests[result.request_id],
            "texts": [g.text for g in result.generations],
            "finish_reasons": [g.finish_reason for g in result.generations],
        }
        self._file.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def discard(out_dir: str | Path) -> None:
    """Once the responses file is written, the partial file has served."""
    (Path(out_dir) / FILE_NAME).unlink(missing_ok=True)
