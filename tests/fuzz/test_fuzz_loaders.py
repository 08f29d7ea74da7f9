"""Every loader refuses a broken input with a token, never a traceback (see conftest.py).

Inputs are the shipped files, mutated: parts replaced by other YAML values, dropped or added,
and now and then raw or spliced text. The recipe target also applies what loads to a real bed,
so the default-content and config checks behind the loader are fuzzed too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fuzzkit import clear_or_loaded, yaml_text
from hypothesis import given
from hypothesis import strategies as st

from ai_proving_ground.campaigns.spec import load_spec
from ai_proving_ground.fixtures import load_fragment
from ai_proving_ground.paths import project_dir
from ai_proving_ground.sites.base import StateQuery, ViewQuery
from ai_proving_ground.sites.embedded.default_content import load_content_dir, load_content_file
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.recipe_spec import load_recipe
from ai_proving_ground.tasks.dataset import load_dataset
from ai_proving_ground.yamlio import load_yaml, loads

KB_DOCS = project_dir("fixtures") / "fixture_kb_docs"
CANVAS_HOME = project_dir("fixtures") / "fixture_canvas_home"
CONTENT_SEED = KB_DOCS / "content" / "node" / "6b0d0c00-0000-4000-8000-000000000001.yml"
CONTENT_SEEDS = [CONTENT_SEED, *(CANVAS_HOME / "content" / "canvas_page").glob("*.yml")]
CONFIG_SEEDS = {p.name.removesuffix(".yml"): load_yaml(p)
                for p in [*(KB_DOCS / "config").glob("*.yml"), *(CANVAS_HOME / "config").glob("*.yml")]}
# A working view: the one the example campaign's oracle arm sets up.
_ORACLE_SETUP = load_yaml(project_dir("campaigns") / "example.yml")["arms"]["oracle"]["setup"][0]
CONFIG_SEEDS[_ORACLE_SETUP[1]] = loads(_ORACLE_SETUP[3])

def seed(path: Path) -> Any:
    return load_yaml(path)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


@given(st.data())
def test_dataset_loader(fuzz_dir: Path, data: st.DataObject) -> None:
    path = write(fuzz_dir / "tasks.yml", yaml_text(data, seed(project_dir("datasets") / "build_tasks.yml")))
    clear_or_loaded(lambda: load_dataset(path))


@given(st.data())
def test_campaign_spec_loader(fuzz_dir: Path, data: st.DataObject) -> None:
    path = write(fuzz_dir / "spec.yml", yaml_text(data, seed(project_dir("campaigns") / "example.yml")))
    clear_or_loaded(lambda: load_spec(path))


@given(st.data(), st.booleans())
def test_fragment_loader(fuzz_dir: Path, data: st.DataObject, with_facts: bool) -> None:
    path = write(fuzz_dir / "fragment.yml", yaml_text(data, seed(KB_DOCS / "manifest" / "fragment.yml")))
    clear_or_loaded(lambda: load_fragment(path, with_facts=with_facts))


@given(st.data())
def test_default_content_loader(fuzz_dir: Path, data: st.DataObject) -> None:
    content = fuzz_dir / "content"
    name = data.draw(st.sampled_from([CONTENT_SEED.name, "not-a-uuid.yml", "x.yml"]))
    seed_file = data.draw(st.sampled_from(CONTENT_SEEDS), label="content seed")
    path = write(content / seed_file.parent.name / name, yaml_text(data, seed(seed_file)))
    clear_or_loaded(lambda: load_content_file(path))
    clear_or_loaded(lambda: load_content_dir(content))
    path.unlink()


@given(st.data())
def test_recipe_loader_apply_and_views(fixtures_bed: Path, fuzz_dir: Path, data: st.DataObject) -> None:
    """A fuzzed recipe (recipe.yml, one config object, one content item) applied to a bed with the
    shipped fixtures; a view it saves is then executed."""
    recipe = fuzz_dir / f"fuzz_recipe_{data.draw(st.integers(0, 10**9))}"
    write(recipe / "recipe.yml", yaml_text(data, seed(KB_DOCS / "recipe.yml")))
    config_name = data.draw(st.sampled_from(sorted(CONFIG_SEEDS)), label="config")
    if data.draw(st.integers(0, 3), label="with config"):
        write(recipe / "config" / f"{config_name}.yml", yaml_text(data, CONFIG_SEEDS[config_name]))
    if data.draw(st.booleans(), label="with content"):
        content = data.draw(st.sampled_from(CONTENT_SEEDS), label="content")
        write(recipe / "content" / content.parent.name / content.name, yaml_text(data, seed(content)))
    site = EmbeddedSite(fixtures_bed)
    if clear_or_loaded(lambda: load_recipe(recipe)) is None:
        return
    if clear_or_loaded(lambda: site.apply_recipe(recipe)) is not None and config_name.startswith("views."):
        for display in ("default", "page_1"):
            site.read_state(StateQuery(views=(ViewQuery(config_name.removeprefix("views.view."),
                                                        display),)))
