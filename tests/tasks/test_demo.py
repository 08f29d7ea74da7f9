"""``python -m ai_proving_ground.demo``: the whole job on a fresh bed, and the envelopes it stores.

The demo grades an oracle attempt (pass) and a nop attempt (fail); both stored envelopes meet the
project's schema, the official 0.2.2 one and, in the eee nox session, the published package.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import demo
from ai_proving_ground.tasks.results import results_dir


def test_the_demo_stores_one_passing_and_one_failing_envelope(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        check_envelope_schemas: Callable[[Any], None]) -> None:
    bed = tmp_path / "demo-bed"
    assert demo.main([str(bed)]) == 0
    assert "oracle: score 1.0" in capsys.readouterr().out
    stored = sorted(results_dir(bed).glob("*.json"))
    envelopes = [json.loads(path.read_text(encoding="utf-8")) for path in stored]
    verdicts = sorted(e["evaluation_results"][0]["score_details"]["details"]["verdict"]
                      for e in envelopes)
    assert verdicts == ["fail", "pass"]
    for envelope in envelopes:
        check_envelope_schemas(envelope)
