"""Core's default-content format: loading in dependency order, exporting, dumping."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground import yamldump
from ai_proving_ground.errors import ApgError
from ai_proving_ground.sites.embedded.default_content import (
    ContentDoc,
    dump_document,
    load_content_dir,
    to_document,
)

U_ARTICLE = "e1714f23-70c0-4493-8e92-af1901771921"
U_TERM = "550f86ad-aa11-4047-953f-636d42889f85"
U_USER = "94503467-be7f-406c-9795-fc25baa22203"


def write(content_dir: Path, rel: str, text: str) -> Path:
    path = content_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def write_doc(content_dir: Path, rel: str, entity_type: str, uuid: str,
              default: dict[str, Any] | None = None, depends: dict[str, str] | None = None) -> Path:
    meta: dict[str, Any] = {"version": "1.0", "entity_type": entity_type, "uuid": uuid}
    if depends:
        meta["depends"] = depends
    return write(content_dir, rel, yamldump.dumps({"_meta": meta, "default": default or {}}))


def content_error(content_dir: Path) -> ApgError:
    with pytest.raises(ApgError) as info:
        load_content_dir(content_dir)
    assert info.value.token == "APG_CONTENT_INVALID"
    return info.value


def uuids(docs: list[ContentDoc]) -> list[str]:
    return [doc.uuid for doc in docs]


# ---------------------------------------------------------------------------- loading


def test_core_fixture_shape_loads(tmp_path: Path) -> None:
    path = write(tmp_path, "node/article.yml", f"""\
        _meta:
          version: '1.0'
          entity_type: node
          uuid: {U_ARTICLE}
          bundle: article
          default_langcode: fr
          depends:
            {U_TERM}: taxonomy_term
        default:
          title: [{{value: 'Test Article'}}]
          uid: [{{entity: {U_USER}}}]
          revision_uid: [{{target_id: 1}}]
        translations:
          en:
            title: [{{value: 'English'}}]
        """)
    [doc] = load_content_dir(tmp_path)
    assert doc == ContentDoc(
        path=path, entity_type="node", uuid=U_ARTICLE, bundle="article", langcode="fr",
        depends={U_TERM: "taxonomy_term"},
        values={"title": [{"value": "Test Article"}], "uid": [{"entity": U_USER}],
                "revision_uid": [{"target_id": 1}]},
        translations={"en": {"title": [{"value": "English"}]}},
    )


def test_bundle_and_langcode_defaults(tmp_path: Path) -> None:
    write_doc(tmp_path, "user/u.yml", "user", U_USER, {"name": [{"value": "ann"}]})
    [doc] = load_content_dir(tmp_path)
    assert (doc.bundle, doc.langcode, doc.depends) == ("user", "en", {})


def test_missing_dir_is_empty_and_dot_files_are_skipped(tmp_path: Path) -> None:
    assert load_content_dir(tmp_path / "absent") == []
    write_doc(tmp_path, "node/a.yml", "node", "a")
    write_doc(tmp_path, "node/.hidden.yml", "node", "h")
    write_doc(tmp_path, ".git/x.yml", "node", "g")
    write(tmp_path, "file/logo.png.txt", "not yaml at all: [")
    assert uuids(load_content_dir(tmp_path)) == ["a"]


@pytest.mark.parametrize(
    ("text", "line", "json_path", "phrase"),
    [
        ("_meta:\n  entity_type: node\ndefault: {}\n", 2, "$._meta.uuid", "is required"),
        ("_meta:\n  uuid: abc\ndefault: {}\n", 2, "$._meta.entity_type", "is required"),
        ("_meta:\n  entity_type: node\n  uuid: ''\ndefault: {}\n", 3, "$._meta.uuid",
         "non-empty string"),
        ("default: {}\n", 1, "$._meta", "must be a mapping"),
        ("_meta: {uuid: a, entity_type: node}\n", 1, "$.default", "is required"),
        ("_meta: {uuid: a, entity_type: node}\ndefault: [title]\n", 2, "$.default",
         "must be a mapping"),
        ("_meta: {uuid: a, entity_type: node}\ndefault:\n  title: {value: x}\n", 3,
         "$.default.title", "list of items"),
        ("_meta: {uuid: a, entity_type: node}\ndefault:\n  title:\n    - x\n", 4,
         "$.default.title[0]", "must be a mapping"),
        ("_meta:\n  uuid: a\n  entity_type: node\n  depends:\n    b: [node]\ndefault: {}\n", 5,
         "$._meta.depends.b", "non-empty string"),
        ("- just a list\n", 1, "$", "must be a mapping"),
    ],
)
def test_validation_errors_point_at_file_line_and_path(
    tmp_path: Path, text: str, line: int, json_path: str, phrase: str
) -> None:
    path = write(tmp_path, "node/bad.yml", text)
    err = content_error(tmp_path)
    assert err.message.startswith(f"{path}:{line}:"), err.message
    assert f": {json_path}: " in err.message
    assert phrase in err.message


def test_invalid_yaml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, "node/broken.yml", "_meta: {uuid: a\n")
    err = content_error(tmp_path)
    assert err.message.startswith(f"{path}:")
    assert "invalid YAML" in err.message


def test_duplicate_uuid_names_both_files(tmp_path: Path) -> None:
    first = write_doc(tmp_path, "node/one.yml", "node", U_ARTICLE)
    second = write_doc(tmp_path, "node/two.yml", "node", U_ARTICLE)
    err = content_error(tmp_path)
    assert err.message.startswith(f"{second}:")
    assert "$._meta.uuid" in err.message
    assert str(first) in err.message and str(second) in err.message


# ---------------------------------------------------------------------------- ordering


def test_order_follows_meta_depends(tmp_path: Path) -> None:
    # 'a-node' would come first on (entity_type, uuid) alone.
    write_doc(tmp_path, "node/n.yml", "node", "a-node", depends={"z-term": "taxonomy_term"})
    write_doc(tmp_path, "taxonomy_term/t.yml", "taxonomy_term", "z-term")
    assert uuids(load_content_dir(tmp_path)) == ["z-term", "a-node"]


def test_order_follows_references_in_values(tmp_path: Path) -> None:
    write_doc(tmp_path, "node/n.yml", "node", "n1", {"field_tags": [{"entity": "t1"}]})
    write_doc(tmp_path, "menu/m.yml", "menu_link_content", "m1",
              {"link": [{"uri": "internal:/", "target_uuid": "n1"}]})
    write_doc(tmp_path, "taxonomy_term/t.yml", "taxonomy_term", "t1")
    assert uuids(load_content_dir(tmp_path)) == ["t1", "n1", "m1"]


def test_ties_break_on_entity_type_then_uuid_not_file_names(tmp_path: Path) -> None:
    # UUID order alone (a, m, m, n, z) and file-name order would both differ from this.
    write_doc(tmp_path, "a/1.yml", "user", "a-user")
    write_doc(tmp_path, "a/2.yml", "node", "m-2")
    write_doc(tmp_path, "a/3.yml", "node", "m-1")
    write_doc(tmp_path, "a/4.yml", "block_content", "z-block")
    write_doc(tmp_path, "a/6.yml", "user", "b-user")
    # z-node waits for a-user; once free it still sorts by (entity_type, uuid) among the ready.
    write_doc(tmp_path, "a/5.yml", "node", "z-node", {"uid": [{"entity": "a-user"}]})
    assert uuids(load_content_dir(tmp_path)) == [
        "z-block", "m-1", "m-2", "a-user", "z-node", "b-user"]


def test_dependency_outside_the_set_is_kept_in_depends(tmp_path: Path) -> None:
    write_doc(tmp_path, "node/n.yml", "node", "n1", {"uid": [{"entity": U_USER}]},
              depends={U_USER: "user"})
    [doc] = load_content_dir(tmp_path)
    assert doc.depends == {U_USER: "user"}


def test_cycle_is_an_error_naming_its_uuids(tmp_path: Path) -> None:
    write_doc(tmp_path, "node/a.yml", "node", "c-a", depends={"c-b": "node"})
    write_doc(tmp_path, "node/b.yml", "node", "c-b", {"field_next": [{"entity": "c-c"}]})
    write_doc(tmp_path, "node/c.yml", "node", "c-c", depends={"c-a": "node"})
    # Sorts before the cycle, so the search starts outside it and must trim its walk.
    write_doc(tmp_path, "node/d.yml", "node", "a-downstream", depends={"c-a": "node"})
    write_doc(tmp_path, "node/e.yml", "node", "e-free")
    err = content_error(tmp_path)
    assert "dependency cycle" in err.message
    assert "c-a -> c-b -> c-c -> c-a" in err.message
    assert "a-downstream" not in err.message
    assert err.message.startswith(f"{tmp_path / 'node' / 'a.yml'}:")
    assert "$._meta.depends.c-b" in err.message


# ---------------------------------------------------------------------------- export


def node_values() -> dict[str, list[dict[str, Any]]]:
    return {
        "title": [{"value": "Test Article"}],
        "nid": [{"value": 7}],
        "vid": [{"value": 9}],
        "uuid": [{"value": U_ARTICLE}],
        "type": [{"target_id": "article"}],
        "langcode": [{"value": "en"}],
        "default_langcode": [{"value": True}],
        "revision_default": [{"value": True}],
        "revision_timestamp": [{"value": 1700000000}],
        "revision_uid": [{"target_id": 1}],
        "revision_log": [{"value": "import"}],
        "changed": [{"value": 1700000001}],
        "created": [{"value": 1700000002}],
        "field_empty": [],
        "body": [{"value": "Crikey it works!", "format": "plain_text", "summary": ""}],
        "field_tags": [{"entity": U_TERM}],
        "uid": [{"entity": U_USER}],
        "status": [{"value": True}],
    }


def test_to_document_applies_the_exporters_omissions(tmp_path: Path) -> None:
    doc = to_document("node", U_ARTICLE, "article", node_values(),
                      ref_types={U_TERM: "taxonomy_term", U_USER: "user"})
    assert doc["_meta"] == {
        "version": "1.0", "entity_type": "node", "uuid": U_ARTICLE, "bundle": "article",
        "default_langcode": "en",
        "depends": {U_TERM: "taxonomy_term", U_USER: "user"},
    }
    assert list(doc["default"]) == [
        "body", "field_tags", "revision_log", "revision_uid", "status", "title", "uid"]
    assert doc["default"]["revision_uid"] == [{"target_id": 1}]


def test_to_document_without_references_has_no_depends() -> None:
    doc = to_document("taxonomy_term", U_TERM, "tags",
                      {"tid": [{"value": 3}], "vid": [{"target_id": "tags"}],
                       "name": [{"value": "Drupal"}], "revision_created": [{"value": 1}]},
                      langcode="de")
    assert doc == {
        "_meta": {"version": "1.0", "entity_type": "taxonomy_term", "uuid": U_TERM,
                  "bundle": "tags", "default_langcode": "de"},
        "default": {"name": [{"value": "Drupal"}]},
    }


def test_unknown_type_drops_only_integer_ids() -> None:
    numeric = to_document("thing", "t1", "thing", {"id": [{"value": 4}], "label": [{"value": "x"}]})
    named = to_document("thing", "t2", "thing", {"id": [{"value": "stage"}]})
    assert list(numeric["default"]) == ["label"]
    assert named["default"] == {"id": [{"value": "stage"}]}


def test_reference_type_comes_from_target_type_or_is_an_error() -> None:
    doc = to_document("node", "n", "page", {"ref": [{"entity": "x", "target_type": "media"}]})
    assert doc["_meta"]["depends"] == {"x": "media"}
    with pytest.raises(ApgError) as info:
        to_document("node", "n", "page", {"field_ref": [{"value": 1}, {"entity": "y"}]})
    assert info.value.token == "APG_CONTENT_INVALID"
    assert "$.default.field_ref[1]" in info.value.message and "y" in info.value.message


def test_to_document_copies_its_input() -> None:
    values = {"title": [{"value": "before"}]}
    doc = to_document("node", "n", "page", values)
    values["title"][0]["value"] = "after"
    assert doc["default"]["title"] == [{"value": "before"}]


def test_dump_is_stable_and_meta_first() -> None:
    doc = to_document("node", U_ARTICLE, "article",
                      {"title": [{"value": "T"}], "uid": [{"entity": U_USER}]},
                      ref_types={U_USER: "user"})
    reordered = {"default": doc["default"], "_meta": doc["_meta"]}
    text = dump_document(doc)
    assert text == dump_document(reordered) == dump_document(doc)
    assert text == textwrap.dedent(f"""\
        _meta:
          version: '1.0'
          entity_type: node
          uuid: {U_ARTICLE}
          bundle: article
          default_langcode: en
          depends:
            {U_USER}: user
        default:
          title:
          - value: T
          uid:
          - entity: {U_USER}
        """)


def test_round_trip_through_a_content_dir(tmp_path: Path) -> None:
    doc = to_document("node", U_ARTICLE, "article", node_values(),
                      ref_types={U_TERM: "taxonomy_term", U_USER: "user"}, langcode="fr")
    write(tmp_path, f"node/{U_ARTICLE}.yml", dump_document(doc))
    write(tmp_path, f"user/{U_USER}.yml", dump_document(
        to_document("user", U_USER, "user", {"uid": [{"value": 5}], "name": [{"value": "ann"}]})))
    loaded = load_content_dir(tmp_path)
    assert uuids(loaded) == [U_USER, U_ARTICLE]
    article = loaded[1]
    assert article.values == doc["default"]
    assert article.depends == doc["_meta"]["depends"]
    assert (article.entity_type, article.bundle, article.langcode) == ("node", "article", "fr")
    assert loaded[0].values == {"name": [{"value": "ann"}]}
