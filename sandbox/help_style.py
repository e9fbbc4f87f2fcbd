"""Help pages without a `<bool>` beside each on/off flag (`--force`, `--help`).

typer 0.29 prints every option's type; a flag takes no value, so its type is noise that
reads as if `--force true` were expected. `plain_flags()` drops it, once per process, for
`python -m sandbox` and `aletheia` alike.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption


def plain_flags() -> None:
    """Show no type for a flag (an option that takes no value) on any help page."""
    if getattr(TyperOption.display_type_rich, "_plain_flags", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich._plain_flags = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
