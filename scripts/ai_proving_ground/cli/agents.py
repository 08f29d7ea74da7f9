"""``apg agents [--approot DIR] [--json]``: the agent adapters ``apg run --agent`` can hand a task to.

One line each: the adapter's name, where it comes from (the bed's ``.ddev/agents/`` or shipped),
its declared credentials class, the programs it declares (``## Commands:``) with whether each is
on PATH, whether it keeps the terminal, and its description. An adapter that cannot be used as
it is (not executable, a bed copy of a shipped name that differs on a DDEV bed, a malformed
header) is listed with the reason in place of its description. ``--json`` prints the same rows as
objects, with the header's environment variables and read paths.

Exit codes: 0 listed; 2 usage.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.cli.common import listing_main
from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.adapters import available, find_adapter


def rows(approot: Path, settings: Settings | None = None) -> list[dict[str, Any]]:
    """One row per adapter name either adapter folder holds (``settings``: unused, the shape
    every listing shares)."""
    listed: list[dict[str, Any]] = []
    for name in available(approot):
        try:
            adapter = find_adapter(name, approot)
        except ApgError as error:
            listed.append({"name": name, "usable": False, "problem": f"{error.token} "
                           f"{error.message}"})
            continue
        record = adapter.as_record()
        record["usable"] = True
        record["on_path"] = {command: shutil.which(command) for command in adapter.header.commands}
        listed.append(record)
    return listed


def _line(row: dict[str, Any]) -> dict[str, str]:
    if not row["usable"]:
        return {"name": row["name"], "source": "-", "credentials": "-", "commands": "-",
                "terminal": "-", "description": row["problem"]}
    commands = ", ".join(f"{c} ({'found' if where else 'not on PATH'})"
                         for c, where in row["on_path"].items()) or "-"
    return {"name": row["name"], "source": row["source"], "credentials": row["credentials"],
            "commands": commands, "terminal": "yes" if row["interactive"] else "no",
            "description": row["description"]}


def main(argv: Sequence[str] | None = None) -> int:
    return listing_main("apg agents", __doc__, argv, "adapters", rows, _line)


if __name__ == "__main__":
    raise SystemExit(main())
