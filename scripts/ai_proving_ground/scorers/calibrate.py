"""Calibrating a judge: human labels beside the judge's verdicts, and Cohen's kappa between them.

A labels file is CSV (a header with ``human`` and ``judge`` columns) or JSON lines (objects with
those keys), one item a row; a label is pass or fail (also yes/no, true/false, 1/0). A row with
no ``judge`` but a ``criterion`` and a ``reply`` is judged now, by the judge given (three votes,
cached). A judge verdict of ``undecided`` is left out of kappa and counted apart, as in a grade.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.scorers.kappa import cohen_kappa

LABELS_INVALID = "APG_JUDGE_LABELS_INVALID"
LABELS = {"pass": "pass", "yes": "pass", "true": "pass", "1": "pass",
          "fail": "fail", "no": "fail", "false": "fail", "0": "fail"}


@dataclass(frozen=True)
class Calibration:
    kappa: float
    items: int  # pairs in kappa
    agreement: float
    undecided: int

    def as_json(self) -> dict[str, Any]:
        kappa = None if self.kappa != self.kappa else round(self.kappa, 6)  # NaN: undefined
        return {"kappa": kappa, "items": self.items, "agreement": round(self.agreement, 6),
                "undecided": self.undecided}


# criterion, reply -> the judge's verdict (pass, fail, undecided).
JudgeNow = Callable[[str, str], str]


def read_labels(path: Path, judge: JudgeNow | None = None) -> list[tuple[str, str]]:
    """(human, judge) per row; a bad row is APG_JUDGE_LABELS_INVALID naming file:line (exit 2)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ApgError(LABELS_INVALID, f"{path}: unreadable: {exc}", exit_code=2) from None
    rows: list[tuple[int, dict[str, Any]]]
    if path.suffix in {".jsonl", ".ndjson"}:
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except ValueError:
                    raise ApgError(LABELS_INVALID, f"{path}:{number}: not JSON", exit_code=2) from None
    else:
        reader = csv.DictReader(io.StringIO(text))
        rows = [(reader.line_num, row) for row in reader]
    pairs = [_pair(path, number, row, judge) for number, row in rows]
    if not pairs:
        raise ApgError(LABELS_INVALID, f"{path}: no labelled items", exit_code=2)
    return pairs


def _pair(path: Path, number: int, row: Any, judge_now: JudgeNow | None) -> tuple[str, str]:
    if not isinstance(row, dict):
        raise ApgError(LABELS_INVALID, f"{path}:{number}: not an object", exit_code=2)
    human = LABELS.get(str(row.get("human", "")).strip().lower())
    raw_judge = str(row.get("judge") or "").strip().lower()
    if not raw_judge and row.get("criterion") and row.get("reply") is not None:
        if judge_now is None:
            raise ApgError(LABELS_INVALID, f"{path}:{number}: a reply to judge, but no judge model "
                           "(set AI_PG_JUDGE_MODEL)", exit_code=2)
        raw_judge = judge_now(str(row["criterion"]), str(row["reply"]))
    judge = "undecided" if raw_judge == "undecided" else LABELS.get(raw_judge)
    if human is None or judge is None:
        raise ApgError(LABELS_INVALID, f"{path}:{number}: human {row.get('human')!r} and judge "
                       f"{row.get('judge')!r} must each be pass or fail (the judge's may be "
                       "undecided)", exit_code=2)
    return human, judge


def calibrate(pairs: list[tuple[str, str]]) -> Calibration:
    decided = [(h, j) for h, j in pairs if j != "undecided"]
    if not decided:
        raise ApgError(LABELS_INVALID, "every judge verdict is undecided: no kappa", exit_code=2)
    humans, judges = [h for h, _ in decided], [j for _, j in decided]
    agreement = sum(h == j for h, j in decided) / len(decided)
    return Calibration(cohen_kappa(humans, judges), len(decided), agreement,
                       len(pairs) - len(decided))
