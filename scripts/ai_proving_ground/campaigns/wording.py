"""The words a campaign report says beside its numbers: the paired effect and the notes on
small samples, shared by the text report, report.md and report.html."""

from __future__ import annotations

from typing import Any

from ai_proving_ground.campaigns.report import SMALL_N


def effect_lines(report: dict[str, Any]) -> list[str]:
    if not report["campaign"]["compared"]:
        return ["One arm: no paired effect (a second arm gives one)"]
    baseline, treatment = report["campaign"]["compared"]
    if not report["effects"]:
        return [f"Effect {treatment} − {baseline}: no judged attempts to compare"]
    lines = []
    for e in report["effects"]:
        head = f"Effect {e['treatment']} − {e['baseline']} ({e['agent']}, {model_name(e['model'])}): "
        if e["difference"] is None:
            lines.append(head + f"not computed, {e['reason']}")
            continue
        rates = (f"{e['treatment']} {e['treatment_rate']:.2f}, "
                 f"{e['baseline']} {e['baseline_rate']:.2f}")
        lines.append(head + f"{e['difference']:+.2f} [{e['low']:+.2f}, {e['high']:+.2f}] ({rates}; "
                     f"{e['level']:.0%} case-level bootstrap over {plural(e['cases'], 'task')}, "
                     f"{e['resamples']} resamples, seed {e['seed']})")
    return lines


def notes(report: dict[str, Any]) -> list[str]:
    said = []
    small = [c for c in report["cells"] if c["n"] < SMALL_N]
    if small:
        said.append(f"note: {len(small)} of {len(report['cells'])} cells have n < {SMALL_N} "
                     "judged attempts; their Wilson intervals are wide, read them before the rates")
    if any(e["difference"] is not None and e["cases"] < SMALL_N for e in report["effects"]):
        said.append(f"note: an effect over fewer than {SMALL_N} tasks has a rough bootstrap "
                     "interval (percentile intervals over few cases run narrow)")
    return said


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def model_name(model: str | None) -> str:
    return "(default)" if model is None else model
