"""load_document builds plain documents from parser events: the data must be PyYAML's, exactly.

The reference is PyYAML's own safe loader over the same text (the C loader where it is built).
Inputs are dumped values, mutated and spliced text (fuzzkit), and documents made of the YAML
forms the event builder leaves to the full loader (anchors, aliases, tags, merge keys, complex
keys, several documents), so both routes are exercised. Types count: ``repr`` compares them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from fuzzkit import values, yaml_text
from hypothesis import given
from hypothesis import strategies as st

from ai_proving_ground.errors import ApgError
from ai_proving_ground.yamldump import dumps
from ai_proving_ground.yamlio import load_document

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# Pieces of YAML that resolve or construct in every way a safe loader knows.
PIECES = ["a: 1\n", "b: 0x1f\n", "c: 1_000\n", "d: 1:20\n", "e: .inf\n", "f: -.NaN\n",
          "g: 2001-12-14\n", "h: 2001-12-14t21:59:43.10-05:00\n", "i: yes\n", "j: No\n",
          "k: ''\n", "l:\n", "m: [1, 'a', \"b\", {x: y}]\n", "n: &x 1\n", "o: *x\n",
          "<<: {p: 1}\n", "q: !!str 1\n", "? [r]\n: s\n", "=: 3\n", "t: !!binary aGk=\n",
          "u: ~\n", "v: 0o17\n", "w: 017\n", "x: +12\n", "y: 1e3\n", "z: 1.0e+3\n",
          "- 1\n", "--- a\n", "...\n", "aa: !\n", "bb: >\n  x\n  y\n", "cc: |\n  p\n",
          "dd: {1: 2, true: 3, null: 4, 1.5: 5}\n", "ee: - x\n", "\t", "ff: 2001-13-45\n"]


def _reference(text: str) -> tuple[str, str]:
    try:
        return "data", repr(yaml.load(text, Loader=_LOADER))
    except yaml.YAMLError:
        return "refused", ""
    except ValueError as exc:  # a timestamp that names no date: PyYAML's own exception
        return "raised", type(exc).__name__


def _ours(path: Path, text: str) -> tuple[str, str]:
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        return "data", repr(load_document(path).data)
    except ApgError:
        return "refused", ""
    except ValueError as exc:
        return "raised", type(exc).__name__


def _same(fuzz_dir: Path, text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # not a text a file can hold
    assert _ours(fuzz_dir / "doc.yml", text) == _reference(text)


@given(st.data())
def test_dumped_and_mutated_text_loads_as_pyyaml_loads_it(fuzz_dir: Path, data: st.DataObject) -> None:
    _same(fuzz_dir, yaml_text(data, data.draw(values, label="seed")))


@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6))
def test_every_yaml_form_loads_as_pyyaml_loads_it(fuzz_dir: Path, pieces: list[str]) -> None:
    _same(fuzz_dir, "".join(pieces))


@given(values)
def test_flow_and_block_styles_load_alike(fuzz_dir: Path, value: Any) -> None:
    _same(fuzz_dir, dumps(value))
    _same(fuzz_dir, yaml.safe_dump(value, default_flow_style=True))
