"""No site command reads or writes through a symlink (or ``..``) that leaves the bed: the config
sync directory (and any file in a directory named with --source/--destination), a recipe's
recipe.yml, config/ and content/, and its sub-recipes. Each refusal
is APG_PATH_UNSAFE, changes nothing and never shows what lies outside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.layout import BedLayout
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

Site = Callable[..., Any]  # the `site` fixture: (rc, out, err) of one in-process command
SECRET = "s3cret-outside-the-bed-42"
NODE_TYPE = "name: Outside\ntype: outside\n"


def refused_unsafe(result: Any) -> str:
    rc, out, err = result
    assert (rc, out) == (1, ""), err
    assert err.startswith("APG_PATH_UNSAFE "), err
    assert SECRET not in err and "Traceback" not in err
    return str(err)


@pytest.fixture
def outside(bed: Path) -> Path:
    """A folder beside the bed holding a config file and a secret."""
    folder = bed.parent / "outside"
    folder.mkdir()
    (folder / "node.type.outside.yml").write_text(NODE_TYPE, encoding="utf-8")
    (folder / "secret.txt").write_text(f"{SECRET}\n", encoding="utf-8")
    return folder


def listing(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.iterdir())}


def sync_links_to(bed: Path, target: Path) -> None:
    sync = BedLayout(bed).config_sync
    for path in sync.iterdir():
        path.unlink()
    sync.rmdir()
    sync.symlink_to(target, target_is_directory=True)


def test_config_export_never_writes_or_deletes_through_a_symlinked_sync_dir(
        bed: Path, site: Site, outside: Path) -> None:
    before = listing(outside)
    sync_links_to(bed, outside)
    refused_unsafe(site(bed, "config:export"))
    assert listing(outside) == before


def test_config_import_never_reads_through_a_symlinked_sync_dir(
        bed: Path, site: Site, outside: Path) -> None:
    sync_links_to(bed, outside)
    refused_unsafe(site(bed, "config:import"))
    assert EmbeddedSite(bed).config_get("node.type.outside") is None


def test_config_import_never_reads_a_file_that_links_out(bed: Path, site: Site,
                                                         outside: Path) -> None:
    (BedLayout(bed).config_sync / "system.secret.yml").symlink_to(outside / "secret.txt")
    err = refused_unsafe(site(bed, "config:import"))
    assert "system.secret.yml" in err


def test_a_named_directory_is_never_read_or_written_through_a_file_that_links_out(
        bed: Path, site: Site, outside: Path, tmp_path: Path) -> None:
    # A directory named with --source/--destination is the caller's (a harness's scratch
    # directory); the files in it still may not lead anywhere else.
    named = tmp_path / "named"
    named.mkdir()
    (named / "system.site.yml").symlink_to(outside / "secret.txt")
    before = listing(outside)
    refused_unsafe(site(bed, "config:import", "--source", str(named)))
    refused_unsafe(site(bed, "config:export", "--destination", str(named)))
    assert listing(outside) == before


def recipe(bed: Path, name: str, text: str = "name: Inside\n") -> Path:
    folder = BedLayout(bed).recipes / name
    folder.mkdir(parents=True)
    (folder / "recipe.yml").write_text(text, encoding="utf-8")
    return folder


def test_a_recipe_whose_config_dir_links_out_is_refused(bed: Path, site: Site,
                                                        outside: Path) -> None:
    folder = recipe(bed, "linked_config", "name: Linked\ninstall: [node]\n")
    (folder / "config").symlink_to(outside, target_is_directory=True)
    refused_unsafe(site(bed, "recipe", str(folder)))
    assert EmbeddedSite(bed).config_get("node.type.outside") is None


def test_a_recipe_whose_content_dir_links_out_is_refused(bed: Path, site: Site,
                                                         outside: Path) -> None:
    folder = recipe(bed, "linked_content")
    (folder / "content").symlink_to(outside, target_is_directory=True)
    refused_unsafe(site(bed, "recipe", str(folder)))


def test_a_content_file_that_links_out_is_refused(bed: Path, site: Site, outside: Path) -> None:
    """Each file is checked against the content folder (resolved once for all of them)."""
    folder = recipe(bed, "linked_content_file")
    (folder / "content" / "node").mkdir(parents=True)
    (outside / "item.yml").write_text(f"_meta: {{uuid: {SECRET}}}\n", encoding="utf-8")
    (folder / "content" / "node" / "item.yml").symlink_to(outside / "item.yml")
    err = refused_unsafe(site(bed, "recipe", str(folder)))
    assert "content file" in err and "item.yml" in err


def test_a_recipe_file_that_links_out_is_refused_without_showing_it(bed: Path, site: Site,
                                                                    outside: Path) -> None:
    folder = BedLayout(bed).recipes / "linked_file"
    folder.mkdir()
    (folder / "recipe.yml").symlink_to(outside / "secret.txt")
    refused_unsafe(site(bed, "recipe", str(folder)))


@pytest.mark.parametrize("name", ["../../outside_recipe", "../outside_recipe/../../outside_recipe"])
def test_a_sub_recipe_named_with_dot_dot_out_of_the_bed_is_refused(bed: Path, site: Site,
                                                                   name: str) -> None:
    escaped = bed.parent / "outside_recipe"
    escaped.mkdir()
    (escaped / "recipe.yml").write_text("name: Escaped\ninstall: [node]\n", encoding="utf-8")
    (escaped / "config").mkdir()
    (escaped / "config" / "node.type.outside.yml").write_text(NODE_TYPE, encoding="utf-8")
    top = recipe(bed, "top", f"name: Top\nrecipes: ['{name}']\n")
    refused_unsafe(site(bed, "recipe", str(top)))
    assert EmbeddedSite(bed).config_get("node.type.outside") is None


def test_sub_recipes_inside_the_bed_still_apply(bed: Path, site: Site) -> None:
    sub = recipe(bed, "sub", "name: Sub\ninstall: [node]\n")
    (sub / "config").mkdir()
    (sub / "config" / "node.type.inside.yml").write_text("name: Inside\ntype: inside\n",
                                                          encoding="utf-8")
    top = recipe(bed, "top", "name: Top\nrecipes: [sub, ../recipes/sub]\n")
    rc, _, err = site(bed, "recipe", str(top))
    assert rc == 0, err
    stored = EmbeddedSite(bed).config_get("node.type.inside")
    assert (stored["name"], stored["type"]) == ("Inside", "inside")
