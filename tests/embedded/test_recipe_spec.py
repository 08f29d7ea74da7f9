"""Recipe parsing and validation, without a site."""

from __future__ import annotations

import dataclasses
import textwrap
from pathlib import Path

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded.recipe_spec import (
    ALLOWED_KEYS,
    load_recipe,
    resolve_subrecipe,
    substitute_inputs,
)


def make_recipe(
    root: Path, name: str, recipe_yml: str, files: dict[str, str] | None = None
) -> Path:
    recipe_dir = root / name
    recipe_dir.mkdir(parents=True)
    (recipe_dir / "recipe.yml").write_text(textwrap.dedent(recipe_yml), encoding="utf-8")
    for rel, text in (files or {}).items():
        path = recipe_dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return recipe_dir


def recipe_error(recipe_dir: Path) -> ApgError:
    with pytest.raises(ApgError) as info:
        load_recipe(recipe_dir)
    assert info.value.token == "APG_RECIPE_INVALID"
    assert info.value.exit_code == 1
    return info.value


FULL = """\
name: 'Knowledge base'
type: Content type
description: |
  Adds a kb_doc type.
  Two lines are fine here.
recipes:
  - base_stack
install:
  - node
  - text
config:
  strict: false
  import:
    node: '*'
    text:
      - text.settings
    system: ~
  actions:
    node.type.kb_doc:
      setDescription: 'Docs: ${site_label}'
    ?user.role.editor:
      grantPermissions:
        - 'create kb_doc content'
content: {}
extra:
  project_browser:
    weight: 3
input:
  site_label:
    data_type: string
    description: The label
    default:
      source: value
      value: Acme
"""


# ---------------------------------------------------------------------------- happy paths


def test_minimal_recipe_gets_drupal_defaults(tmp_path: Path) -> None:
    spec = load_recipe(make_recipe(tmp_path, "tiny", "name: Tiny\n"))
    assert spec.name == "Tiny"
    assert spec.type is None and spec.description is None
    assert spec.recipes == () and spec.install == ()
    assert spec.config_import == {} and spec.config_actions == {}
    assert spec.config_strict is True
    assert spec.config_files == {} and spec.content_dir is None
    assert spec.extra == {} and spec.input == {}


def test_full_recipe_is_parsed(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "kb", FULL, {
        "config/node.type.kb_doc.yml": "type: kb_doc\nname: 'KB doc'\n",
        "config/views.view.kb.yml": "id: kb\n",
        "config/README.txt": "not config\n",
        "content/node/x.yml": "_meta: {}\n",
    })
    spec = load_recipe(recipe_dir)
    assert spec.path == recipe_dir
    assert spec.type == "Content type"
    assert spec.description == "Adds a kb_doc type.\nTwo lines are fine here.\n"
    assert spec.recipes == ("base_stack",)
    assert spec.install == ("node", "text")
    assert spec.config_strict is False
    assert spec.config_import == {"node": "*", "text": ["text.settings"], "system": None}
    assert list(spec.config_actions) == ["node.type.kb_doc", "?user.role.editor"]
    assert spec.config_actions["?user.role.editor"] == {
        "grantPermissions": ["create kb_doc content"]}
    assert spec.config_files == {
        "node.type.kb_doc": {"type": "kb_doc", "name": "KB doc"},
        "views.view.kb": {"id": "kb"},
    }
    assert spec.content_dir == recipe_dir / "content"
    assert spec.extra == {"project_browser": {"weight": 3}}
    assert spec.input["site_label"]["default"] == {"source": "value", "value": "Acme"}


def test_strict_list_and_null_recipes(tmp_path: Path) -> None:
    spec = load_recipe(make_recipe(tmp_path, "r", """\
        name: R
        recipes: ~
        config:
          strict: [node.type.page, system.site]
        """))
    assert spec.recipes == ()
    assert spec.config_strict == ("node.type.page", "system.site")


# ---------------------------------------------------------------------------- errors


def test_unknown_top_level_key_is_named_with_allowed_keys(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "r", "name: R\nmodules: [node]\n")
    err = recipe_error(recipe_dir)
    assert err.message.startswith(f"{recipe_dir / 'recipe.yml'}:2:")
    assert "$.modules: unknown key 'modules'" in err.message
    assert "allowed keys: " + ", ".join(ALLOWED_KEYS) in err.message


@pytest.mark.parametrize(
    ("text", "line", "json_path", "phrase"),
    [
        ("type: Site\n", 1, "$.name", "is required"),
        ('name: "two\\nlines"\n', 1, "$.name", "single line"),
        ("name: [a]\n", 1, "$.name", "must be a string"),
        ("name: R\ntype: ''\n", 2, "$.type", "must not be blank"),
        ("name: R\ndescription: \"bell\\a\"\n", 2, "$.description", "control characters"),
        ("name: R\nrecipes: base\n", 2, "$.recipes", "must be a list"),
        ("name: R\nrecipes:\n  - ok\n  - 3\n", 4, "$.recipes[1]", "must be a string"),
        ("name: R\nrecipes:\n  - r\n", 3, "$.recipes[0]", "cannot depend on itself"),
        ("name: R\ninstall: node\n", 2, "$.install", "must be a list"),
        ("name: R\ninstall: ~\n", 2, "$.install", "must be a list"),
        ("name: R\nconfig: ~\n", 2, "$.config", "must be a mapping"),
        ("name: R\nconfig:\n  import: {}\n  bogus: 1\n", 4, "$.config.bogus",
         "allowed keys: import, actions, strict"),
        ("name: R\nconfig:\n  import:\n    node:\n      - nodot\n", 5, "$.config.import.node[0]",
         "not a config name"),
        ("name: R\nconfig:\n  import:\n    node: 5\n", 4, "$.config.import.node",
         "'*', a list of config names or null"),
        ("name: R\nconfig:\n  strict: sometimes\n", 3, "$.config.strict", "boolean, or a list"),
        ("name: R\nconfig:\n  strict:\n    - .x\n", 4, "$.config.strict[0]", "not a config name"),
        ("name: R\nconfig:\n  actions: [a]\n", 3, "$.config.actions", "must be a mapping"),
        ("name: R\nconfig:\n  actions:\n    system.site: {}\n", 4, "$.config.actions.system.site",
         "at least one action"),
        ("name: R\ncontent: yes\n", 2, "$.content", "mapping or a list"),
        ("name: R\nextra:\n  9lives: 1\n", 3, "$.extra.9lives", "not a valid extension name"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    default: {source: value, value: 1}\n",
         4, "$.input.x.description", "is required"),
        ("name: R\ninput:\n  x:\n    data_type: entity\n    description: d\n"
         "    default: {source: value, value: 1}\n", 4, "$.input.x.data_type", "primitive"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n"
         "    default: {source: state, value: 1}\n", 6, "$.input.x.default.source", "one of"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n"
         "    default:\n      source: env\n", 7, "$.input.x.default", "'env' key is required"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n"
         "    default: {source: config, config: [system.site]}\n", 6,
         "$.input.x.default.config", "[config name, property path]"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n    hint: h\n"
         "    default: {source: value, value: 1}\n", 6, "$.input.x.hint", "unknown key 'hint'"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n"
         "    prompt: {method: shout}\n    default: {source: value, value: 1}\n", 6,
         "$.input.x.prompt.method", "one of: ask"),
        ("name: R\ninput:\n  x:\n    data_type: string\n    description: d\n"
         "    form:\n      '#type': textfield\n      child: {}\n"
         "    default: {source: value, value: 1}\n", 8, "$.input.x.form.child", "child elements"),
        ("- name: R\n", 1, "$", "must be a mapping"),
    ],
)
def test_validation_errors_point_at_file_line_and_path(
    tmp_path: Path, text: str, line: int, json_path: str, phrase: str
) -> None:
    recipe_dir = make_recipe(tmp_path, "r", text)
    err = recipe_error(recipe_dir)
    assert err.message.startswith(f"{recipe_dir / 'recipe.yml'}:{line}:"), err.message
    assert f": {json_path}: " in err.message
    assert phrase in err.message


def test_missing_recipe_yml_names_the_directory(tmp_path: Path) -> None:
    empty = tmp_path / "nothing_here"
    empty.mkdir()
    err = recipe_error(empty)
    assert str(empty) in err.message
    assert "no recipe.yml" in err.message


def test_invalid_yaml_in_recipe_yml(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "r", "name: R\ninstall: [node\n")
    err = recipe_error(recipe_dir)
    assert err.message.startswith(f"{recipe_dir / 'recipe.yml'}:")
    assert "invalid YAML" in err.message


def test_invalid_yaml_in_config_file_names_that_file(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "r", "name: R\n", {
        "config/system.site.yml": "name: ok\n",
        "config/views.view.bad.yml": "id: bad\ndisplay: {default: [\n",
    })
    err = recipe_error(recipe_dir)
    assert err.message.startswith(f"{recipe_dir / 'config' / 'views.view.bad.yml'}:")
    assert "invalid YAML" in err.message


def test_config_file_must_be_a_mapping(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "r", "name: R\n", {"config/system.site.yml": "- a\n"})
    err = recipe_error(recipe_dir)
    assert err.message.startswith(f"{recipe_dir / 'config' / 'system.site.yml'}:1:1: $: ")


# ---------------------------------------------------------------------------- sub-recipes


def test_bare_subrecipe_is_a_sibling(tmp_path: Path) -> None:
    make_recipe(tmp_path / "recipes", "base", "name: Base\n")
    parent = load_recipe(make_recipe(tmp_path / "recipes", "kb", "name: KB\nrecipes: [base]\n"))
    found = resolve_subrecipe(parent, "base", tmp_path / "web", tmp_path)
    assert found == tmp_path / "recipes" / "base"


def test_subrecipe_with_slash_is_relative_to_drupal_root(tmp_path: Path) -> None:
    web = tmp_path / "web"
    make_recipe(web / "core" / "recipes", "basic_html", "name: Basic HTML\n")
    make_recipe(tmp_path / "recipes", "basic_html", "name: Decoy\n")
    parent = load_recipe(make_recipe(tmp_path / "recipes", "kb", """\
        name: KB
        recipes:
          - core/recipes/basic_html
        """))
    found = resolve_subrecipe(parent, "core/recipes/basic_html", web, tmp_path)
    assert found == web / "core" / "recipes" / "basic_html"


def test_missing_subrecipe_error_points_at_its_entry(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path / "recipes", "kb", """\
        name: KB
        recipes:
          - base
          - nowhere
        """)
    make_recipe(tmp_path / "recipes", "base", "name: Base\n")
    parent = load_recipe(recipe_dir)
    with pytest.raises(ApgError) as info:
        resolve_subrecipe(parent, "nowhere", tmp_path, tmp_path)
    assert info.value.token == "APG_RECIPE_INVALID"
    assert info.value.message.startswith(f"{recipe_dir / 'recipe.yml'}:4:")
    assert "$.recipes[1]: the nowhere recipe does not exist" in info.value.message
    assert str(tmp_path / "recipes" / "nowhere") in info.value.message


def test_subrecipe_dir_without_recipe_yml_is_missing(tmp_path: Path) -> None:
    (tmp_path / "recipes" / "hollow").mkdir(parents=True)
    parent = load_recipe(make_recipe(tmp_path / "recipes", "kb", "name: KB\nrecipes: [hollow]\n"))
    with pytest.raises(ApgError, match="hollow recipe does not exist"):
        resolve_subrecipe(parent, "hollow", tmp_path, tmp_path)


def test_self_dependency_by_path_is_refused(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path / "recipes", "kb", "name: KB\nrecipes: [recipes/kb]\n")
    parent = load_recipe(recipe_dir)  # the basename check cannot see through a path
    with pytest.raises(ApgError) as info:
        resolve_subrecipe(parent, "recipes/kb", tmp_path, tmp_path)
    assert info.value.message.startswith(f"{recipe_dir / 'recipe.yml'}:2:")
    assert "cannot depend on itself" in info.value.message


def test_self_dependency_by_bare_name_is_refused(tmp_path: Path) -> None:
    parent = load_recipe(make_recipe(tmp_path, "kb", "name: KB\n"))
    with pytest.raises(ApgError, match="kb recipe cannot depend on itself"):
        resolve_subrecipe(dataclasses.replace(parent, recipes=("kb",)), "kb", tmp_path, tmp_path)


# ---------------------------------------------------------------------------- inputs

INPUTS = """\
name: R
input:
  label:
    data_type: string
    description: Label
    default: {source: value, value: Acme}
  flag:
    data_type: boolean
    description: Flag
    default: {source: value, value: true}
  from_env:
    data_type: string
    description: From env
    default: {source: env, env: APG_TEST_RECIPE_ENV}
config:
  actions:
    node.type.${label}:
      setDescription: 'About ${label} (${flag}) from ${from_env}; keep ${unknown}'
      setThirdPartySettings:
        - {module: x, key: list, value: ['${label}', 7]}
"""


def test_inputs_are_substituted_in_actions_not_config_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APG_TEST_RECIPE_ENV", "the-env")
    spec = load_recipe(make_recipe(tmp_path, "r", INPUTS, {
        "config/system.site.yml": "name: '${label} site'\npage: {front: '/${label}'}\ncount: 3\n",
    }))
    done = substitute_inputs(spec)
    assert list(done.config_actions) == ["node.type.Acme"]
    actions = done.config_actions["node.type.Acme"]
    assert actions["setDescription"] == "About Acme (1) from the-env; keep ${unknown}"
    assert actions["setThirdPartySettings"] == [{"module": "x", "key": "list",
                                                 "value": ["Acme", 7]}]
    # Core substitutes inputs in actions only; config files are imported verbatim.
    assert done.config_files["system.site"] == {
        "name": "${label} site", "page": {"front": "/${label}"}, "count": 3}
    assert "node.type.${label}" in spec.config_actions  # the original is untouched


def test_given_values_win_and_are_not_expanded_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("APG_TEST_RECIPE_ENV", "e")
    spec = load_recipe(make_recipe(tmp_path, "r", INPUTS))
    done = substitute_inputs(spec, {"r.label": "${flag}", "flag": False})
    assert done.config_actions["node.type.${flag}"]["setDescription"] == (
        "About ${flag} () from e; keep ${unknown}")


def test_missing_env_input_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APG_TEST_RECIPE_ENV", raising=False)
    recipe_dir = make_recipe(tmp_path, "r", INPUTS)
    with pytest.raises(ApgError) as info:
        substitute_inputs(load_recipe(recipe_dir))
    assert info.value.token == "APG_RECIPE_INVALID"
    assert info.value.message.startswith(f"{recipe_dir / 'recipe.yml'}:14:")
    assert "$.input.from_env.default.env: environment variable APG_TEST_RECIPE_ENV" in (
        info.value.message)


def test_config_sourced_input_needs_a_value(tmp_path: Path) -> None:
    recipe_dir = make_recipe(tmp_path, "r", """\
        name: R
        input:
          site:
            data_type: string
            description: Site name
            default:
              source: config
              config: [system.site, name]
        config:
          actions:
            system.site:
              simpleConfigUpdate: {slogan: '${site}'}
        """)
    spec = load_recipe(recipe_dir)
    with pytest.raises(ApgError) as info:
        substitute_inputs(spec)
    assert info.value.message.startswith(f"{recipe_dir / 'recipe.yml'}:7:")
    assert "not supported by the embedded site" in info.value.message
    done = substitute_inputs(spec, {"site": "Given"})
    assert done.config_actions["system.site"] == {"simpleConfigUpdate": {"slogan": "Given"}}


def test_no_inputs_returns_the_spec_unchanged(tmp_path: Path) -> None:
    spec = load_recipe(make_recipe(tmp_path, "r", "name: R\n", {
        "config/system.site.yml": "name: '${x}'\n"}))
    assert substitute_inputs(spec) is spec
