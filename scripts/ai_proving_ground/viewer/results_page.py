"""results.html: a bed's stored results (``apg results``) as a page, each failed result with its
failed checks' expected and found values. Written under the bed's baseline folder (``view/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_proving_ground import __version__
from ai_proving_ground.baselines.store import baseline_dir
from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text
from ai_proving_ground.results.index import list_rows
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.envelope import read_envelope
from ai_proving_ground.tasks.results import results_dir
from ai_proving_ground.viewer.render import environment

PAGE = "results.html"


def _entry(row: Any) -> dict[str, Any]:
    failed: list[dict[str, Any]] = []
    if not row.error:
        try:
            failed = [c.as_json() for c in read_envelope(Path(row.file)).checks if not c.passed]
        except ApgError:
            failed = []
    return {"row": row, "failed": failed}


def write_results_page(approot: Path, settings: Settings) -> Path:
    rows = list_rows(results_dir(approot, settings))
    target = baseline_dir(approot, settings) / "view" / PAGE
    target.parent.mkdir(parents=True, exist_ok=True)
    html = environment(True).get_template("results.html.j2").render(
        title=f"Results of {approot}", approot=str(approot), entries=[_entry(r) for r in rows],
        version=__version__)
    atomic_write_text(target, html)
    return target
