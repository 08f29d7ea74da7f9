"""The judging tree: every root whose files decide a verdict, labelled for the escrow record."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fixtures import FixtureSet
from ai_proving_ground.fsutil import is_within
from ai_proving_ground.paths import BASE_RECIPE_NAME, PACKAGE_DIR, PROJECT_ROOT
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.tasks.dataset import resolve_dataset_path
from ai_proving_ground.verifier_file import load_verifier


def judging_roots(approot: Path, fixture_set: FixtureSet,
                  settings: Settings = DEFAULT_SETTINGS) -> list[dict[str, Any]]:
    """Labelled absolute roots. Inside the bed a root's label is its bed-relative path; outside,
    ``grader:``, ``project:`` or ``fixture:`` names it. Roots inside another root are dropped.
    The ``.git`` root is judged only in the parts the verifier's ``GIT_JUDGED`` names."""
    bed = approot.resolve()
    in_bed = ["recipes", "datasets", ".ddev/commands", ".ddev/agents", "scripts/escrow_verify.py"]
    candidates: list[tuple[str, Path, bool]] = [(rel, bed / rel, True) for rel in in_bed]
    candidates.append(("grader:ai_proving_ground", PACKAGE_DIR, False))
    candidates.append(("project:datasets", PROJECT_ROOT / "datasets", False))
    # apg run falls back to the shipped adapters when the bed has none of that name.
    candidates.append(("project:ddev/agents", PROJECT_ROOT / "ddev" / "agents", False))
    if not (bed / "recipes" / BASE_RECIPE_NAME / "recipe.yml").is_file():
        candidates.append((f"project:recipes/{BASE_RECIPE_NAME}",
                           PROJECT_ROOT / "recipes" / BASE_RECIPE_NAME, False))
    for fixture in sorted(fixture_set.fixtures, key=lambda f: f.name):
        candidates.append((f"fixture:{fixture.name}", fixture.directory, False))
    dataset = _configured_dataset(approot, settings)
    if dataset is not None:
        candidates.append((f"dataset:{dataset.name}", dataset, False))
    roots: list[dict[str, Any]] = []
    chosen: list[Path] = []
    for label, path, inside in candidates:
        if not inside:
            # Outside roots are recorded resolved; one that resolves into the bed is a bed path.
            path = path.resolve()
            if bed in path.parents:
                label = path.relative_to(bed).as_posix()
        if any(is_within(path, seen) for seen in chosen):
            continue
        chosen.append(path)
        roots.append({"label": label, "path": str(path)})
    # The bed's repository steers git and names object stores: its config, hooks, info and
    # alternates (and what .git itself is) are judged like code; its objects and index are not.
    roots.append({"label": ".git", "path": str(bed / ".git"), "only": list(load_verifier().GIT_JUDGED)})
    return roots


def _configured_dataset(approot: Path, settings: Settings) -> Path | None:
    """The dataset file $AI_PG_DATASET names, when set: grading reads it, so it is judged."""
    if not settings.dataset:
        return None
    try:
        return resolve_dataset_path(None, approot, settings)
    except ApgError as exc:
        say("APG_ESCROW_DATASET_UNRESOLVED", f"{exc.message}; it is not fingerprinted")
        return None
