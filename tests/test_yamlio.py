"""yamlio: invalid YAML text is a token naming where it came from, never PyYAML's exception."""

from __future__ import annotations

import pytest

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
