"""The report's charts as inline SVG, drawn by pygal: pass rates with their 95% Wilson intervals
(pygal's confidence intervals), per arm and per task. Inline SVG with no script keeps
report.html one file that opens offline; pygal is small and quick to import (about 0.2 s, where
matplotlib took 2 s at the end of every campaign), and is imported only here."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Colour-blind-safe (Okabe-Ito), one per arm, in the campaign's arm order.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")
# pygal names each chart by a random UUID; a fixed id per chart keeps reports reproducible.
_CHART_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# pygal adds a comment naming itself and, even with no script files, an inline script holding
# its tooltip configuration: the pages carry no script at all (their CSP forbids any).
_DROPPED = re.compile(r"<!--.*?-->|<script\b.*?</script>", re.DOTALL)


@dataclass(frozen=True)
class Bar:
    label: str
    rate: float | None  # None: nothing judged
    low: float
    high: float
    arm: str


def rate_chart(bars: Sequence[Bar], arms: Sequence[str], title: str, chart_id: str) -> str:
    """A horizontal bar per row, coloured by arm: the pass rate, its Wilson interval a whisker."""
    # Lazy for start-up time: only writing a report needs pygal.
    import pygal

    # Lazy for start-up time, likewise.
    from pygal.style import Style

    colours = {arm: PALETTE[i % len(PALETTE)] for i, arm in enumerate(arms)}
    style = Style(background="white", plot_background="white", font_family="sans-serif",
                  label_font_size=11, major_label_font_size=11, title_font_size=14,
                  opacity="1", opacity_hover="1")
    chart = pygal.HorizontalBar(
        js=[], disable_xml_declaration=True, range=(0, 1), show_legend=False, style=style,
        width=820, height=max(160, 34 * len(bars) + 110), title=title, print_values=False,
        x_title="pass rate (whiskers: 95% Wilson interval)", truncate_label=-1)
    # pygal draws the first value at the bottom: reverse, so the chart reads like the table.
    shown = list(bars)[::-1]
    chart.x_labels = [bar.label for bar in shown]
    chart.add("pass rate", [
        None if bar.rate is None else
        {"value": bar.rate, "ci": {"low": bar.low, "high": bar.high},
         "color": colours.get(bar.arm, PALETTE[-1]),
         "label": f"{bar.rate:.2f} [{bar.low:.2f}, {bar.high:.2f}]"} for bar in shown])
    svg: str = chart.render(is_unicode=True)
    return _DROPPED.sub("", _CHART_ID.sub(chart_id, svg))


def arm_bars(report: dict[str, Any]) -> list[Bar]:
    return [Bar(label=_who(row["arm"], row["agent"], row["model"]), rate=row["rate"],
                low=row["wilson"][0], high=row["wilson"][1], arm=row["arm"])
            for row in report["arms"]]


def cell_bars(report: dict[str, Any]) -> list[Bar]:
    return [Bar(label=f"{cell['task_id']}: {_who(cell['arm'], cell['agent'], cell['model'])}",
                rate=cell["rate"], low=cell["wilson"][0], high=cell["wilson"][1],
                arm=cell["arm"]) for cell in report["cells"]]


def _who(arm: str, agent: str, model: str | None) -> str:
    return f"{arm} ({agent}{', ' + model if model else ''})"
