"""yamldump writes what PyYAML writes, byte for byte, for any plain data it writes itself.

The reference is the call the product made before yamldump existed (yamlio.dumps): libyaml's
emitter when PyYAML has it, and PyYAML's own emitter, which must agree with it. Strings come from
an alphabet of every character that decides a scalar's style (indicators, spaces, quotes,
digits, the letters of YAML 1.1's booleans, line breaks, tabs, non-ASCII and astral text) and
from the words and numbers a resolver reads as another type.
"""

from __future__ import annotations

import itertools
from typing import Any

import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ai_proving_ground import yamldump

DUMPERS = [d for d in (getattr(yaml, "CSafeDumper", None), yaml.SafeDumper) if d is not None]


def pyyaml(data: Any, dumper: Any) -> str:
    return str(yaml.dump(data, Dumper=dumper, sort_keys=False, default_flow_style=False,
                         allow_unicode=True, width=4096))


def casings(word: str) -> list[str]:
    return ["".join(c) for c in itertools.product(*((ch.lower(), ch.upper()) for ch in word))]


WORDS = sorted({c for w in ("yes", "no", "true", "false", "on", "off", "null", "y", "n", "nan",
                            "inf") for c in casings(w)}
               | {"~", "<<", "=", ".inf", "-.inf", ".nan", ".NaN", "0x1f", "0o17", "0b101",
                  "1_000", "1:30", "2024-01-02", "2024-01-02 03:04:05", "1e5", "1.0e+5", ".5",
                  "-", "--", "---", "...", "- a", "? a", ": a", "a: b", "a #b", "a#b", "@a"})
ALPHABET = list(" -?:#,[]{}&*!|>'\"%@`.~<=+_/\\^$01234789eaflnorstuyNYTFOE\t\n\r\x85\xa0é\u2028"
                "\u2029\ufeff\ufffe\ue000\U0001f600\x00\x7f")
texts = st.one_of(st.text(ALPHABET, max_size=10), st.sampled_from(WORDS),
                  st.from_regex(r"[-+]?[0-9_.:eE]{1,8}", fullmatch=True),
                  st.text(ALPHABET, min_size=90, max_size=140))
# Mostly what config holds (characters a plain scalar may hold, floats without an exponent), so
# that most of these documents are yamldump's to write.
usual_texts = st.one_of(st.from_regex(r"[a-zA-Z0-9_/][a-zA-Z0-9_.:/ '#?@é-]{0,14}", fullmatch=True),
                        st.text(list("abcnoty ABCNOTY 0129 -_./:#'\"?@é"), max_size=12),
                        st.sampled_from(WORDS))


def documents(strings: st.SearchStrategy[str], floats: st.SearchStrategy[float]) -> Any:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), floats, strings)
    nested = st.recursive(scalars, lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(strings, inner, max_size=4)), max_leaves=24)
    return st.one_of(st.dictionaries(strings, nested, min_size=1, max_size=5),
                     st.lists(nested, min_size=1, max_size=5), nested)


wild_data = documents(texts, st.floats())
usual_data = documents(usual_texts, st.floats(-1e6, 1e6))


# More examples than the other fuzz targets: a wrong style may show on one string in hundreds.
@settings(max_examples=max(500, settings.default.max_examples))
@given(st.one_of(usual_data, wild_data))
@example({"name": "AI proving ground", "page": {"403": "", "404": "", "front": "/home"}})
@example({"a": [[], {}, [[1, 2], {"b": [3]}], None, True, 1.5, -0.0]})
@example({"k" * 101: 1})
@example({"long": "word " * 900})
@example({"long": "word " * 790 + "x", "quoted": ["#" + "word " * 790 + "x"]})  # near the limit
def test_what_yamldump_writes_is_what_pyyaml_writes(data: Any) -> None:
    written = yamldump.written_here(data)
    for dumper in DUMPERS:
        if written is not None:
            assert written == pyyaml(data, dumper), dumper
    assert yamldump.dumps(data) == pyyaml(data, DUMPERS[0])


@settings(max_examples=200)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6))
def test_words_and_numbers_as_keys_and_values(words: list[str]) -> None:
    data = {word: list(words) for word in words}
    written = yamldump.written_here(data)
    for dumper in DUMPERS:
        if written is not None:
            assert written == pyyaml(data, dumper)
