"""The baseline's JSON files through their one definition each: the versions manifest
(``VersionsRecord``), the public-files sidecar (``Sidecar``) and the metadata
(``BaselineRecord``). The bytes written are the ones provision always wrote; a file that breaks
its schema is refused on write and on read, naming the file and the JSON path; the two that
every reset reads are checked without importing jsonschema."""

from __future__ import annotations

import dataclasses
from dataclasses import fields, replace
from pathlib import Path

from ai_proving_ground.baselines import versions
from ai_proving_ground.baselines.public_files import CHANGED, Sidecar, snapshot_paths, verify
from ai_proving_ground.baselines.store import Baseline, BaselineRecord, read_metadata
from ai_proving_ground.records import write_record
from ai_proving_ground.schemas import load_schema
from ai_proving_ground.sites.base import Versions
from import_kit import imported_after
from support.record_kit import canonical, refused_on_read, refused_on_write

KEY = "13f368704136d113"
LIVE = Versions(core="11.1.0", runtime={"python": "3.11.2", "sqlite": "3.40.1"},
                modules={"node": {"package": "Core", "version": "11.1.0", "source_reference": None},
                         "apg_custom": {"package": None, "version": "1.0.0",
                                        "source_reference": "abc123"}},
                schema={"node": 8001, "apg_custom": None})
SIDECAR = Sidecar(format=1, public_dir="web/sites/default/files", archive=f"files.{KEY}.tar.gz",
                  sha256="a" * 64, entries=5, list_sha256="b" * 64)
METADATA = BaselineRecord(format=1, set_key=KEY, canonical="apg_base@1\ncanvas_home@1\n",
                          fixtures=["kb_docs", "canvas_home"], tag=f"apg-baseline-{KEY}",
                          captured_at=1764600000, driver="sqlite")


def test_the_records_are_their_schemas() -> None:
    for cls in (versions.VersionsRecord, Sidecar, BaselineRecord):
        assert set(load_schema(cls.SCHEMA)["properties"]) == {f.name for f in fields(cls)}


def test_the_versions_manifest_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    path = tmp_path / f"versions.{KEY}.json"
    write_record(path, versions.record(LIVE))
    # What provision has always written: format 1, then the Versions fields as they are.
    assert path.read_text(encoding="utf-8") == canonical({"format": 1, **dataclasses.asdict(LIVE)})
    recorded = versions.load(path)
    assert recorded == versions.record(LIVE)
    assert versions.code_differences(recorded, versions.record(LIVE)) == []
    moved = replace(LIVE, core="11.2.0", modules={**LIVE.modules, "node": {
        "package": "Core", "version": "11.2.0", "source_reference": None}})
    assert versions.code_differences(recorded, versions.record(moved)) == [
        ("core", "11.1.0", "11.2.0"), ("modules.node", "Core 11.1.0", "Core 11.2.0")]


def test_a_versions_manifest_breaking_its_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / f"versions.{KEY}.json"
    broken = replace(versions.record(LIVE), modules={"node": {"package": "Core"}})
    refused_on_write(path, broken, "$.modules.node")
    good = versions.record(LIVE).as_json()
    unreadable = versions.UNREADABLE
    message = refused_on_read(path, {**good, "extra": 1}, versions.load, "$", unreadable)
    assert message.endswith("recapture the baseline to record it again")
    refused_on_read(path, {**good, "runtime": {"python": 3.11}}, versions.load,
                    "$.runtime.python", unreadable)
    refused_on_read(path, {k: v for k, v in good.items() if k != "schema"}, versions.load, "$",
                    unreadable)


def test_the_sidecar_keeps_its_bytes_and_is_refused_off_schema(tmp_path: Path) -> None:
    snapshot = snapshot_paths(tmp_path, KEY)
    write_record(snapshot.sidecar, SIDECAR)
    assert snapshot.sidecar.read_text(encoding="utf-8") == canonical({
        "format": 1, "public_dir": "web/sites/default/files", "archive": f"files.{KEY}.tar.gz",
        "sha256": "a" * 64, "entries": 5, "list_sha256": "b" * 64})
    refused_on_write(tmp_path / "other.json", replace(SIDECAR, sha256="not hex"), "$.sha256")
    snapshot.archive.write_bytes(b"")
    snapshot.listing.write_bytes(b"")
    good = SIDECAR.as_json()

    def read(path: Path) -> Sidecar:
        assert path == snapshot.sidecar
        return verify(snapshot)

    for data, where in (({**good, "entries": "5"}, "$.entries"), ({**good, "owner": "x"}, "$"),
                        ({k: v for k, v in good.items() if k != "public_dir"}, "$")):
        message = refused_on_read(snapshot.sidecar, data, read, where, CHANGED)
        assert message.endswith("recapture the baseline")


def test_the_metadata_keeps_its_bytes_and_reads_back(tmp_path: Path) -> None:
    baseline = Baseline(tmp_path, KEY)
    write_record(baseline.metadata, METADATA)
    assert baseline.metadata.read_text(encoding="utf-8") == canonical({
        "format": 1, "set_key": KEY, "canonical": "apg_base@1\ncanvas_home@1\n",
        "fixtures": ["kb_docs", "canvas_home"], "tag": f"apg-baseline-{KEY}",
        "captured_at": 1764600000, "driver": "sqlite"})
    assert read_metadata(baseline) == METADATA
    refused_on_write(tmp_path / "other.json", replace(METADATA, set_key="../x"), "$.set_key")
    good = METADATA.as_json()

    def read(path: Path) -> BaselineRecord:
        assert path == baseline.metadata
        return read_metadata(baseline)

    refused_on_read(baseline.metadata, {**good, "captured_at": "today"}, read, "$.captured_at")
    refused_on_read(baseline.metadata, {**good, "dump": "db.dump"}, read, "$")


def test_reading_a_valid_manifest_and_sidecar_does_not_import_jsonschema(tmp_path: Path) -> None:
    snapshot = snapshot_paths(tmp_path, KEY)
    write_record(snapshot.sidecar, SIDECAR)
    write_record(tmp_path / "versions.json", versions.record(LIVE))
    code = ("from pathlib import Path\n"
            "from ai_proving_ground.baselines import public_files, versions\n"
            "from ai_proving_ground.records import read_record\n"
            f"assert versions.load(Path({str(tmp_path / 'versions.json')!r})) is not None\n"
            f"read_record(Path({str(snapshot.sidecar)!r}), public_files.Sidecar)\n")
    assert imported_after(code, "jsonschema") == []
