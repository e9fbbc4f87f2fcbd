"""The published dataset configs are listed once: schemas/dataset_configs.py.

Publishing, reading a Hub folder back, training and evaluation used to keep their own
config-name -> schema maps, which could drift apart. These tests scan the source of
pipeline/, flows/ and schemas/ for a second registry in any of the forms one took: a dict
literal or `dict(...)` call mapping config names to Arrow schemas, a `DatasetConfig(...)`
built elsewhere, or a module-level `CONFIGS` / `CONFIG_BY_NAME` / `CONFIG_NAMES` of its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

from schemas.dataset_configs import CONFIG_BY_NAME, CONFIG_NAMES, CONFIGS

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("pipeline", "flows", "schemas")
HOME = ROOT / "schemas" / "dataset_configs.py"
REGISTRY_NAMES = {"CONFIGS", "CONFIG_BY_NAME", "CONFIG_NAMES"}


def _is_schema(node: ast.AST) -> bool:
    """An expression naming an Arrow table schema: `INSTANCE_SCHEMA`, `x.DPO_SCHEMA`, `c.schema`."""
    if isinstance(node, ast.Name):
        return node.id.endswith("_SCHEMA")
    if isinstance(node, ast.Attribute):
        return node.attr.endswith("_SCHEMA") or node.attr == "schema"
    return False


def _name_to_schema_pairs(node: ast.AST) -> list[tuple[str, ast.AST]]:
    """(key, value) pairs of a dict literal or a `dict(k=v)` call whose keys are strings."""
    if isinstance(node, ast.Dict):
        return [
            (k.value, v)
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
        ]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return [(kw.arg, kw.value) for kw in node.keywords if kw.arg is not None]
    return []


def registries_in(source: str, where: str) -> list[str]:
    """Each second registry of dataset configs found in `source`, as `where:line: what`."""
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        pairs = _name_to_schema_pairs(node)
        mapped = sorted(k for k, v in pairs if k in CONFIG_BY_NAME and _is_schema(v))
        if len(mapped) >= 2:
            found.append(f"{where}:{node.lineno}: maps configs {mapped} to schemas")
        if isinstance(node, ast.Call):
            func = node.func
            called = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if called == "DatasetConfig":
                found.append(f"{where}:{node.lineno}: builds a DatasetConfig")
    for node in tree.body:  # module level: a registry of its own by name
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Name) and t.id in REGISTRY_NAMES:
                found.append(f"{where}:{node.lineno}: defines its own {t.id}")
    return found


def test_config_names_and_schemas_are_listed_once():
    found = []
    files = sorted(p for d in SCANNED for p in (ROOT / d).rglob("*.py"))
    assert len(files) > 100  # the scan really reads the packages
    for path in files:
        if path == HOME:
            continue
        found += registries_in(path.read_text(), str(path.relative_to(ROOT)))
    assert not found, (
        "dataset configs are listed in schemas/dataset_configs.py only; read names, schemas "
        "and sides from CONFIGS / CONFIG_BY_NAME there instead of:\n" + "\n".join(found)
    )


def test_the_scan_finds_a_second_registry():
    """The scan's rules on the forms a second registry took (train/data.py's old `_SCHEMAS`)."""
    old = (
        "_SCHEMAS = {'train': INSTANCE_SCHEMA, 'dpo': DPO_SCHEMA, 'other': 1}\n"
        "also = dict(heldout=schemas.INSTANCE_SCHEMA, hard=c.schema)\n"
        "one = DatasetConfig('train', INSTANCE_SCHEMA, 'instances', 'train', 'x')\n"
        "CONFIG_NAMES = ('train',)\n"
        "fine = {'train': 'a file', 'dpo': 'another'}  # names, but no schemas\n"
    )
    found = registries_in(old, "old.py")
    assert found == [
        "old.py:1: maps configs ['dpo', 'train'] to schemas",
        "old.py:2: maps configs ['hard', 'heldout'] to schemas",
        "old.py:3: builds a DatasetConfig",
        "old.py:4: defines its own CONFIG_NAMES",
    ]


def test_the_registry_itself():
    """Nine configs, each once, every name's entry the config itself, splits by side."""
    assert len(CONFIGS) == 9 and len(set(CONFIG_NAMES)) == 9
    assert CONFIG_NAMES == tuple(c.name for c in CONFIGS)
    assert all(CONFIG_BY_NAME[c.name] is c for c in CONFIGS)
    assert {c.name for c in CONFIGS if c.side == "eval"} == {"heldout", "strong", "hard", "adv"}
    assert all(c.splits == ("test", "full") for c in CONFIGS if c.side == "eval")
    assert all(c.splits == ("train",) for c in CONFIGS if c.side == "train")
