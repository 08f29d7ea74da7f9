"""Strategies and the one property the fuzz targets share (see conftest.py for the profiles)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from hypothesis import strategies as st

from ai_proving_ground.errors import ApgError
from ai_proving_ground.yamldump import dumps

T = TypeVar("T")

# Scalars YAML can say, including the ones that trip type assumptions.
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                    st.sampled_from(["", ".", "..", "../x", "/", "*", "?", "~", "-1", "0", "1e9",
                                     "node", "kb_doc", "a.b.", "\x00", "é"]))
values: st.SearchStrategy[Any] = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(st.text(max_size=8), st.integers(0, 3)),
                                            inner, max_size=4)),
    max_leaves=12)


def mutate(data: st.DataObject, value: Any, depth: int = 0) -> Any:
    """A copy of ``value`` with a few parts replaced, dropped or added (drawn from ``data``)."""
    choice = data.draw(st.integers(0, 9), label=f"mutation@{depth}")
    if choice == 0 or depth > 6:
        return data.draw(values, label="replacement")
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if data.draw(st.integers(0, 7), label="drop?") == 0:
                continue
            out[key] = mutate(data, item, depth + 1)
        if data.draw(st.integers(0, 5), label="add?") == 0:
            out[data.draw(st.text(max_size=8), label="new key")] = data.draw(values)
        return out
    if isinstance(value, list):
        items = [mutate(data, item, depth + 1) for item in value
                 if data.draw(st.integers(0, 7), label="drop item?") != 0]
        if data.draw(st.integers(0, 5), label="add item?") == 0:
            items.append(data.draw(values))
        return items
    return value if choice > 3 else data.draw(values, label="replacement")


def yaml_text(data: st.DataObject, seed: Any) -> str:
    """YAML from a mutated ``seed``, or now and then raw text (broken syntax, tabs, bytes)."""
    kind = data.draw(st.integers(0, 7), label="text kind")
    if kind == 0:
        return data.draw(st.text(max_size=80), label="raw text")
    text = dumps(mutate(data, seed))
    if kind == 1:  # cut or splice the dumped text
        at = data.draw(st.integers(0, len(text)), label="cut")
        return text[:at] + data.draw(st.text(max_size=10), label="splice") + text[at + 1:]
    return text


def clear_or_loaded(load: Callable[[], T]) -> T | None:
    """``load()``; an ``ApgError`` (a clear refusal) gives None, anything else propagates."""
    try:
        return load()
    except ApgError as exc:
        assert exc.token.startswith("APG_"), exc
        assert "Traceback" not in exc.message
        return None
