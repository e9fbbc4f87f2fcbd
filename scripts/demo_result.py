"""What a finished demo build made, printed at the end of scripts/demo.sh: each dataset config's
rows per split and fingerprint, where the dataset, its card and the intermediate tables are, and
the evaluation's headline when the run config has an `evaluate:` section.

    .venv/bin/python scripts/demo_result.py configs/demo.yaml
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from pipeline.common.hub_folder import split_files
from pipeline.config import load_run_config
from pipeline.evaluate.report import answer_rule_line, headline
from pipeline.publish.shown import config_fingerprints
from schemas.dataset_configs import CONFIGS


def main(config: str) -> None:
    cfg = load_run_config(config)
    hub, work = cfg.hub_dir.resolve(), cfg.work_dir.resolve()
    prints = config_fingerprints(hub)
    print(f"{'config':16s} {'split':6s} {'rows':>6s}  fingerprint")
    for c in CONFIGS:
        for split in c.splits:
            files = split_files(hub, c.name, split)
            rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
            key = f"{c.name}/test" if split == "test" else c.name
            print(f"{c.name:16s} {split:6s} {rows:6d}  {prints.get(key, {}).get('hash', '-')}")
    print(
        f"\nevery stage's fingerprint:    {work / 'fingerprints.json'}"
        "  (compare two builds line by line)"
    )
    print(f"\ndataset (laid out as pushed): {hub}")
    print(f"card:                         {hub / 'README.md'}")
    print(f"intermediate tables:          {work}  (problems.parquet, judged.parquet, ...)")
    load = f"import datasets; print(datasets.load_dataset('{hub}', 'train'))"
    print(f'load it:  .venv/bin/python -c "{load}"')

    if cfg.eval_dir is not None:  # the run config's `evaluate:` section, run after publish
        report = json.loads((cfg.eval_dir / "report.json").read_text())
        print(
            f"\nevaluation of {report['model']} on each config's "
            f"`{report['config']['split']}` split (in brackets: a random verifier's expected value)"
        )
        print(headline(report))
        print(answer_rule_line(report))
        print(f"report:                       {cfg.eval_dir.resolve() / 'report.md'}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
