"""Bundles made through the entity API commands, and what items get filled in on save."""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from pathlib import Path

import pytest

from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.sites.embedded.file_items import file_values, image_size, public_path

Site = Callable[..., tuple[int, str, str]]


def test_a_content_type_that_exists_is_refused_and_nothing_changes(bed: Path,
                                                                   site: Site) -> None:
    rc, _, err = site(bed, "node-type:create", "news", "--name=News", "--no-body")
    assert rc == 0, err
    assert "Saved node.type.news." in err, "--no-body makes the type alone"
    rc, out, _ = site(bed, "config:list", "field.field.node.news.")
    assert out.strip() == ""
    rc, _, err = site(bed, "node-type:create", "news", "--name=Other")
    assert rc == 1 and err.startswith("APG_CONFIG_EXISTS node.type.news already exists"), err
    rc, out, _ = site(bed, "config:get", "node.type.news", "name")
    assert "News" in out


def _stored_after_uuid(bed: Path, site: Site, name: str) -> list[str]:
    """The YAML lines of config ``name`` after its first, a uuid."""
    rc, out, err = site(bed, "config:get", name, "--format=yaml")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("uuid: "), lines
    return lines[1:]


def test_a_vocabulary_gets_drupals_defaults(bed: Path, site: Site) -> None:
    rc, _, err = site(bed, "vocabulary:create", "tags", "--name=Tags")
    assert rc == 0, err
    assert _stored_after_uuid(bed, site, "taxonomy.vocabulary.tags") == [
        "langcode: en", "status: true", "dependencies: {}", "name: Tags", "vid: tags",
        "description: null", "weight: 0", "new_revision: false"]


def _riff_webp(chunk: bytes, payload: bytes) -> bytes:
    return b"RIFF" + struct.pack("<I", 4 + 8 + len(payload)) + b"WEBP" + chunk + struct.pack(
        "<I", len(payload)) + payload


HEADERS = {
    "png": (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", 4, 3)
            + b"\x08\x02\x00\x00\x00", (4, 3)),
    "gif": (b"GIF89a" + struct.pack("<HH", 7, 5) + b"\x00" * 8, (7, 5)),
    # SOI, an APP0 segment to skip, a DHT (not a frame), then SOF0 with height 6, width 9.
    "jpeg": (b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 4) + b"JF"
             + b"\xff\xc4" + struct.pack(">H", 3) + b"\x00"
             + b"\xff\xc0" + struct.pack(">HBHH", 11, 8, 6, 9) + b"\x03\x00\x00", (9, 6)),
    # A VP8 frame tag, the start code 9d 01 2a, then 14-bit width and height.
    "webp-lossy": (_riff_webp(b"VP8 ", b"\x00" * 3 + b"\x9d\x01\x2a"
                              + struct.pack("<HH", 16, 12)), (16, 12)),
    "webp-lossless": (_riff_webp(b"VP8L", b"\x2f" + ((10 - 1) | ((20 - 1) << 14)).to_bytes(
        4, "little")), (10, 20)),
    "webp-extended": (_riff_webp(b"VP8X", b"\x00" * 4 + (31).to_bytes(3, "little")
                                 + (7).to_bytes(3, "little")), (32, 8)),
    "text": (b"not an image\n", None),
}


@pytest.mark.parametrize("kind", list(HEADERS))
def test_image_size_reads_the_header(kind: str, tmp_path: Path) -> None:
    data, size = HEADERS[kind]
    (tmp_path / "image").write_bytes(data)
    assert image_size(tmp_path / "image") == size


def test_a_public_uri_never_leads_out_of_the_public_directory(tmp_path: Path) -> None:
    public = tmp_path / "files"
    (public / "golden").mkdir(parents=True)
    (tmp_path / "secret.png").write_bytes(HEADERS["png"][0])
    (public / "link.png").symlink_to(tmp_path / "secret.png")
    assert public_path("public://golden/a.png", public) == (public / "golden/a.png").resolve()
    assert public_path("public://../secret.png", public) is None
    assert public_path("public://link.png", public) is None
    assert image_size(public_path("public://missing.png", public)) is None


def test_a_file_made_from_a_uri_is_named_for_it() -> None:
    assert file_values({"uri": "public://golden/golden.txt"})["filename"] == "golden.txt"
    assert file_values({"uri": [{"value": "public://a/b.png"}]})["filename"] == "b.png"
    assert file_values({"uri": "public://x.txt", "filename": "kept"})["filename"] == "kept"


def test_a_role_made_through_the_api_comes_last_with_its_actions(bed: Path, site: Site) -> None:
    rc, _, err = site(bed, "role:create", "editor", "Editor")
    assert rc == 0, err
    names = ["user.role.editor", "system.action.user_add_role_action.editor",
             "system.action.user_remove_role_action.editor"]
    stored = EmbeddedSite(bed).read_state(StateQuery(config=tuple(names))).config
    role = dict(stored["user.role.editor"])
    assert role.pop("uuid")
    # After the user module's anonymous (0) and authenticated (1) roles.
    assert list(role.items()) == [
        ("langcode", "en"), ("status", True), ("dependencies", {}), ("id", "editor"),
        ("label", "Editor"), ("weight", 2), ("is_admin", False), ("permissions", [])]
    add = dict(stored["system.action.user_add_role_action.editor"])
    assert add.pop("uuid")
    assert list(add.items()) == [
        ("langcode", "en"), ("status", True),
        ("dependencies", {"config": ["user.role.editor"], "module": ["user"]}),
        ("id", "user_add_role_action.editor"),
        ("label", "Add the Editor role to the selected user(s)"), ("type", "user"),
        ("plugin", "user_add_role_action"), ("configuration", {"rid": "editor"})]
    assert stored["system.action.user_remove_role_action.editor"]["label"] == (
        "Remove the Editor role from the selected user(s)")
    rc, _, err = site(bed, "role:create", "editor")
    assert rc == 1 and err.startswith("APG_CONFIG_EXISTS user.role.editor already exists"), err


def test_a_role_set_raw_makes_no_actions(bed: Path, site: Site) -> None:
    """drush config:set writes the object alone: no entity hook runs."""
    rc, _, err = site(bed, "config:set", "user.role.raw", "?", '{"id": "raw", "label": "Raw"}',
                      "--input-format=json")
    assert rc == 0, err
    rc, out, _ = site(bed, "config:list", "system.action.")
    assert "raw" not in out


def test_a_menu_gets_drupals_defaults_and_its_links_menu_link_contents(bed: Path,
                                                                       site: Site) -> None:
    rc, _, err = site(bed, "menu:create", "footer", "--label=Footer")
    assert rc == 0, err
    assert _stored_after_uuid(bed, site, "system.menu.footer") == [
        "langcode: en", "status: true", "dependencies: {}", "id: footer", "label: Footer",
        "description: null", "locked: false"]
    rc, _, err = site(bed, "menu:create", "footer", "--label=Again")
    assert rc == 1 and err.startswith("APG_CONFIG_EXISTS system.menu.footer already exists"), err
    rc, _, err = site(bed, "entity:create", "menu_link_content", "--set", "title=About")
    assert rc != 0 and "install it with `apg site pm:install menu_link_content`" in err, err
    assert site(bed, "pm:install", "link", "menu_link_content", "-y")[0] == 0
    rc, out, err = site(bed, "entity:create", "menu_link_content", "--set", "title=About",
                        "--set", "link=internal:/about", "--set", "enabled=0", "--format=json")
    assert rc == 0, err
    uuid = json.loads(out)["uuid"]
    record = EmbeddedSite(bed).read_state(StateQuery(entities=(uuid,))).entities[uuid]
    assert record is not None and record.label == "About" and record.status is False
    assert record.bundle == "menu_link_content"
    assert {k: v for k, v in record.fields.items() if k != "link"} == {
        "menu_name": [{"value": "tools"}], "external": [{"value": False}],
        "rediscover": [{"value": True}], "weight": [{"value": 0}],
        "expanded": [{"value": False}]}, "MenuLinkContent's defaults, rediscover by preSave"
    assert record.fields["link"] == [{"uri": "internal:/about", "title": None, "options": {}}]
    rc, _, err = site(bed, "entity:update", "menu_link_content", uuid, "--set", "weight=3")
    assert rc == 0, err
    record = EmbeddedSite(bed).read_state(StateQuery(entities=(uuid,))).entities[uuid]
    assert record is not None and record.status is False, "an update keeps it disabled"
    assert record.fields["weight"] == [{"value": 3}]
    rc, _, err = site(bed, "entity:create", "menu_link_content", "--set", "title=X",
                      "--set", "weight=heavy")
    assert rc == 1 and "APG_ENTITY_INVALID" in err and "'weight' needs an integer" in err, err
