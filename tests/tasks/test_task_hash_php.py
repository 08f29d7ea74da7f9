"""task_sha256 is the original system's canonical form, checked against real PHP: ``ksort`` of
every associative array, list order kept, ``json_encode`` with JSON_UNESCAPED_SLASHES |
JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION. Each case goes to ``php`` as JSON (which
PHP decodes into the same arrays its YAML parser makes) and its output is compared byte for
byte with the product's."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from ai_proving_ground.paths import project_dir
from ai_proving_ground.phpjson import canonical
from ai_proving_ground.tasks.dataset import load_dataset

PHP = shutil.which("php")
pytestmark = pytest.mark.skipif(PHP is None, reason="needs php (Debian's php-cli; .ci/run installs it)")

CANON = r"""<?php
function canon($v) {
    if (!is_array($v)) { return $v; }
    if (!array_is_list($v)) { ksort($v); }
    foreach ($v as $k => $x) { $v[$k] = canon($x); }
    return $v;
}
$flags = JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION
    | JSON_THROW_ON_ERROR;
foreach (json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR) as $case) {
    echo json_encode(canon($case), $flags), "\n";
}
"""

CASES: dict[str, Any] = {
    "ordinary": {"id": "t1", "prompt": "Café / naïve", "checks": [{"type": "x", "value": 1.0}]},
    "numeric-string keys": {"10": "a", "9": "b", "2": "c", "x": "d", "-1": "e"},
    "keys PHP leaves strings": {"01": 1, "-0": 2, "1.5": 3, " 2": 4, "1e3": 5, "abc": 6},
    "keys 0..n-1 become a list": {"1": "second", "0": "first"},
    "empty mappings": {"a": {}, "b": [{}], "c": {"d": {}}},
    "large and small floats": [1e25, 1.5e-7, 1e16, 1e17, 0.0001, 0.00001, 123.456, -2.5, 0.1,
                               12345678901234567.0, 5e-324, -0.0, 0.0, 100.0],
    "integers past 64 bits": [2**63 - 1, 2**64, -(2**63)],
    "line and paragraph separators": "a\u2028b\u2029c",
    "controls, quotes, slashes": "tab\there \"q\" back\\slash /path\x01\x1f\x7f",
    "unicode key order": {"é": 1, "z": 2, "Z": 3, "ä": 4, "a": 5},
    "nested": {"b": {"y": [3, {"k": 1, "a": 2}], "x": None}, "a": [True, False]},
}


def php_canonical(values: list[Any]) -> list[str]:
    assert PHP is not None
    done = subprocess.run([PHP, "-d", "serialize_precision=-1", "-r",
                           CANON.removeprefix("<?php\n")],
                          input=json.dumps(values), capture_output=True, text=True, timeout=60,
                          check=True)
    return done.stdout.splitlines()


def test_every_edge_case_is_written_as_php_writes_it() -> None:
    names = list(CASES)
    expected = php_canonical([CASES[name] for name in names])
    found = [canonical(CASES[name]) for name in names]
    assert dict(zip(names, found, strict=True)) == dict(zip(names, expected, strict=True))
    # The cases do tell the two forms apart: plain sorted JSON differs on most of them.
    plain = [json.dumps(CASES[n], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
             for n in names if not isinstance(CASES[n], str)]
    assert sum(p != e for p, e in zip(plain, expected, strict=False)) >= 5


def test_every_shipped_task_hashes_as_the_original_would() -> None:
    for path in sorted(project_dir("datasets").glob("*.yml")):
        entries = yaml.safe_load(path.read_bytes())["tasks"]
        dataset = load_dataset(path)
        expected = php_canonical(entries)
        for entry, text in zip(entries, expected, strict=True):
            task = dataset.task(entry["id"])
            assert task.sha256 == hashlib.sha256(text.encode("utf-8")).hexdigest(), task.id
