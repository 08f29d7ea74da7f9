"""``apg fixtures [--approot DIR] [--json]``: the fixtures a bed can be provisioned with.

One line each: the fixture's name and version, the folder it is found in (AI_PG_FIXTURE_PATH,
the bed's ``recipes/``, then the shipped ``fixtures/``), how many config objects and content
items it declares, and whether this bed has a baseline of a set that holds it. A fixture that
does not load (an ambiguous name, a malformed fragment) is listed with the reason. ``--json``
prints the rows as objects.

Exit codes: 0 listed; 2 usage.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.store import provisioned_sets
from ai_proving_ground.cli.common import listing_main
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import available_fixtures, load_fixture
from ai_proving_ground.settings import Settings


def rows(approot: Path, settings: Settings) -> list[dict[str, Any]]:
    try:
        provisioned = {name for names in provisioned_sets(approot, settings) for name in names}
    except ApgError:
        provisioned = set()  # not a bed (or an unsafe one): nothing is provisioned here
    listed: list[dict[str, Any]] = []
    for name in available_fixtures(approot, settings):
        try:
            fixture = load_fixture(name, approot, settings=settings)
        except ApgError as error:
            listed.append({"name": name, "problem": f"{error.token} {error.message}"})
            continue
        facts = fixture.facts
        listed.append({"name": name, "version": fixture.version, "folder": str(fixture.directory),
                       "config": len(facts["config"]), "content": len(facts["content"]),
                       "provisioned": name in provisioned})
    return listed


def _line(row: dict[str, Any]) -> dict[str, Any]:
    if "problem" in row:
        return {"name": row["name"], "version": "-", "config": "-", "content": "-",
                "provisioned": "-", "folder": row["problem"]}
    return {"name": row["name"], "version": row["version"], "config": row["config"],
            "content": row["content"], "provisioned": "yes" if row["provisioned"] else "no",
            "folder": row["folder"]}


def main(argv: Sequence[str] | None = None) -> int:
    return listing_main("apg fixtures", __doc__, argv, "fixtures", rows, _line)


if __name__ == "__main__":
    raise SystemExit(main())
