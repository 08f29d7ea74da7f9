"""The bench's fixture: one content type with an integer field and any number of published nodes."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground import yamldump

NAMESPACE = "be0c0000-"


def _uuid(index: int) -> str:
    return f"{NAMESPACE}0000-4000-8000-{index:012d}"


def write_bench_fixture(root: Path, nodes: int) -> str:
    """A fixture with a content type, one field and ``nodes`` published nodes."""
    name = f"bench_{nodes}"
    directory = root / f"fixture_{name}"
    (directory / "config").mkdir(parents=True)
    (directory / "content" / "node").mkdir(parents=True)
    (directory / "manifest").mkdir()
    (directory / "recipe.yml").write_text(yamldump.dumps(
        {"name": f"Bench {nodes}", "install": ["node", "text"]}))
    config = {
        "node.type.bench_doc": {"type": "bench_doc", "name": "Bench doc"},
        "field.storage.node.field_bench_rank": {"entity_type": "node",
                                                "field_name": "field_bench_rank",
                                                "type": "integer"},
        "field.field.node.bench_doc.field_bench_rank": {"entity_type": "node",
                                                        "bundle": "bench_doc",
                                                        "field_name": "field_bench_rank",
                                                        "label": "Rank"},
    }
    for config_name, data in config.items():
        (directory / "config" / f"{config_name}.yml").write_text(yamldump.dumps(data))
    records = []
    for index in range(1, nodes + 1):
        uuid, title = _uuid(index), f"Bench document {index}"
        doc = {"_meta": {"version": "1.0", "entity_type": "node", "uuid": uuid,
                         "bundle": "bench_doc", "default_langcode": "en"},
               "default": {"title": [{"value": title}], "status": [{"value": True}],
                           "field_bench_rank": [{"value": index}]}}
        (directory / "content" / "node" / f"{uuid}.yml").write_text(yamldump.dumps(doc))
        records.append({"uuid": uuid, "entity_type": "node", "bundle": "bench_doc",
                        "label": title, "status": True})
    fragment = {"name": name, "version": 1,
                "owns": {"config": ["node.type.bench_doc", "field.storage.node.field_bench_",
                                    "field.field.node.bench_doc."],
                         "content_namespace": NAMESPACE},
                "export": {"config": sorted(config), "content": [
                    {"entity_type": "node", "bundle": "bench_doc"}]},
                "facts": {"modules": ["node", "text"], "config": sorted(config),
                          "counts": {"node": {"bench_doc": nodes}}, "content": records}}
    (directory / "manifest" / "fragment.yml").write_text(yamldump.dumps(fragment))
    return name
