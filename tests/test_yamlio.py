"""yamlio: invalid YAML text is a token naming where it came from, never PyYAML's exception."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground import yamlio
from ai_proving_ground.errors import ApgError


def test_loads_names_the_source_line_and_column() -> None:
    with pytest.raises(ApgError) as caught:
        yamlio.loads("a: 1\nb: [unclosed\n", source="the value")
    assert caught.value.token == "APG_YAML_INVALID"
    assert caught.value.message.startswith("the value:3:1: $: invalid YAML: ")


def test_loads_takes_the_caller_s_token() -> None:
    with pytest.raises(ApgError) as caught:
        yamlio.loads("\t- tab", token="APG_RECIPE_INVALID")
    assert caught.value.token == "APG_RECIPE_INVALID"
    assert caught.value.message.startswith("<text>:")


def test_loads_returns_the_data() -> None:
    assert yamlio.loads("a: [1, 2]\n") == {"a": [1, 2]}


def test_positions_come_from_the_node_tree_composed_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "doc.yml"
    path.write_text("name: x\nitems:\n  - a\n  - {b: 2}\n", encoding="utf-8")
    doc = yamlio.load_document(path)
    assert doc.data == {"name": "x", "items": ["a", {"b": 2}]}
    assert doc.where(["items", 1, "b"]) == f"{path}:4:9: $.items[1].b"
    assert isinstance(doc.root, yaml.MappingNode)


@pytest.mark.parametrize(("text", "expected"), [
    ("a: &x [1]\nb: *x\n", {"a": [1], "b": [1]}),
    ("base: &b {x: 1}\nc:\n  <<: *b\n  y: 2\n", {"base": {"x": 1}, "c": {"x": 1, "y": 2}}),
    ("a: !!str 1\n", {"a": "1"}),
    ("? [k]\n: v\n", None),
])
def test_documents_beyond_the_event_builder_load_as_before(tmp_path: Path, text: str,
                                                           expected: Any) -> None:
    path = tmp_path / "doc.yml"
    path.write_text(text, encoding="utf-8")
    if expected is None:  # a list as a key: PyYAML refuses it, and so do we, with the position
        with pytest.raises(ApgError) as caught:
            yamlio.load_document(path)
        assert caught.value.message == f"{path}:1:3: $: invalid YAML: found unhashable key"
        return
    assert yamlio.load_document(path).data == expected



def test_nan_keys_collide_as_in_pyyaml(tmp_path: Path) -> None:
    # PyYAML's constructor returns one nan object for every .nan, so two .nan keys are one key.
    path = tmp_path / "doc.yml"
    text = "? .nan\n: 1\n? .nan\n: 2\nl: [.nan, .nan]\n"
    path.write_text(text, encoding="utf-8")
    data = yamlio.load_document(path).data
    assert repr(data) == repr(yaml.safe_load(text)) == "{nan: 2, 'l': [nan, nan]}"


def test_a_text_read_again_is_built_once_and_each_caller_gets_its_own_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kept by the whole text: a file rewritten is built anew; a caller's change to its data
    reaches neither the kept data nor the next caller."""
    monkeypatch.setattr(yamlio, "_known", {})
    monkeypatch.setattr(yamlio, "_known_chars", 0)
    builds: list[str] = []
    build = yamlio._data_from_events
    monkeypatch.setattr(yamlio, "_data_from_events", lambda text: builds.append(text) or build(text))
    path = tmp_path / "doc.yml"
    path.write_text("a:\n  b: [1, 2]\nwhen: 2024-01-02\n")
    first = yamlio.load_yaml(path)
    first["a"]["b"].append(3)
    second = yamlio.load_yaml(path)
    assert second == {"a": {"b": [1, 2]}, "when": yamlio.load_yaml(path)["when"]}
    assert str(second["when"]) == "2024-01-02" and len(builds) == 1
    path.write_text("a:\n  b: [1, 2, 3]\nwhen: 2024-01-02\n")
    assert yamlio.load_yaml(path)["a"]["b"] == [1, 2, 3] and len(builds) == 2


def test_the_kept_texts_stay_under_their_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlio, "_known", {})
    monkeypatch.setattr(yamlio, "_known_chars", 0)
    monkeypatch.setattr(yamlio, "_KNOWN_LIMIT", 30)
    monkeypatch.setattr(yamlio, "_KNOWN_ONE", 12)
    for number in range(10):
        assert yamlio._known_data(f"n: 100000{number}\n") == {"n": 1000000 + number}  # 11 chars
    assert list(yamlio._known) == ["n: 1000008\n", "n: 1000009\n"] and yamlio._known_chars == 22
    assert yamlio._known_data("long: 1000000\n") == {"long": 1000000} and len(yamlio._known) == 2
    assert yamlio._known_data("a: *b\n") is yamlio._UNUSUAL and len(yamlio._known) == 2
