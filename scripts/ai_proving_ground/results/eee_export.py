"""``apg results export --eee DIR``: stored envelopes in every_eval_ever's own data layout.

every_eval_ever's datastore, and its validator with the semantic checks on, want one aggregate
record per file at ``data/<collection>/<developer>/<model>/<uuid4>.json``. Each envelope is
written there unchanged but for three things: ``schema_version`` (0.2.2, the Drupal AI projects'
shared format, or 0.3.0, the stable release, on request: our envelopes meet both), the two path
fields of older envelopes made portable (:func:`paths.portable_path` writes them so now), and
nothing else. An envelope that is not merge-ready is skipped and said why: a model id with no
developer (``unknown/unknown``: grade with ``--model DEVELOPER/MODEL``), or an absolute host path
left anywhere in it. File names are a UUID (version 4 in form) derived from the evaluation id,
so exporting again rewrites the same files instead of adding copies.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_text, is_within
from ai_proving_ground.tasks.envelope import read_envelope

SCHEMA_VERSIONS = ("0.2.2", "0.3.0")
DEFAULT_SCHEMA = "0.2.2"
UNKNOWN_DEVELOPER = "unknown"
# A folder name of the layout: what every_eval_ever's own ids use (letters, digits, . _ -).
_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_PATH_FIELDS = (("source_metadata", "dataset_path"), ("eval_library", "grader_class_file"))


@dataclass
class ExportReport:
    """What an export wrote, and what it skipped with the reason."""

    written: list[str] = field(default_factory=list)  # paths relative to the export folder
    unchanged: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (evaluation id or file, why)


def file_uuid(evaluation_id: str) -> str:
    """A UUID in version-4 form, fixed by the evaluation id: a re-export names the same file."""
    digest = bytearray(hashlib.sha256(evaluation_id.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x40  # version 4
    digest[8] = (digest[8] & 0x3F) | 0x80  # RFC 4122 variant
    return str(uuid.UUID(bytes=bytes(digest)))


def _segment(value: str) -> str:
    """One folder name of the layout; a model id's further slashes become ``--``."""
    text = value.replace("/", "--")
    if not _SEGMENT.match(text) or text in {".", ".."}:
        raise ValueError(f"{value!r} cannot be a folder of the layout (letters, digits, . _ -)")
    return text


def _portable(document: dict[str, Any]) -> None:
    """Older envelopes named the dataset and grader class files by absolute path: keep only the
    file's name (its hash beside it identifies it)."""
    for section, key in _PATH_FIELDS:
        details = document.get(section, {}).get("additional_details", {})
        value = details.get(key)
        if isinstance(value, str) and value.startswith("/"):
            details[key] = f"external:{Path(value).name}"


def _host_paths(value: Any, roots: tuple[str, ...], where: str = "$") -> Iterator[str]:
    """Where a string value names a folder of this host. A path alone cannot tell: a check's
    ``/kb/billing`` is a site path, so the folders that leak are listed instead (the bed, the
    product's install, the home and temporary folders)."""
    if isinstance(value, str):
        if any(root in value for root in roots):
            yield where
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _host_paths(item, roots, f"{where}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _host_paths(item, roots, f"{where}[{index}]")


def exported(document: dict[str, Any], schema_version: str, collection: str | None,
             host_roots: tuple[str, ...] = ()) -> tuple[str, dict[str, Any]]:
    """The layout path (relative) and the record of one envelope; ValueError says why not."""
    record = json.loads(json.dumps(document))
    record["schema_version"] = schema_version
    _portable(record)
    developer, _, model = str(record["model_info"]["id"]).partition("/")
    if not model or developer == UNKNOWN_DEVELOPER:
        raise ValueError(f"model id {record['model_info']['id']!r} names no developer: grade it "
                         "with --model DEVELOPER/MODEL (e.g. anthropic/claude-sonnet-4)")
    found = next(_host_paths(record, tuple(r for r in host_roots if len(r) > 1)), None)
    if found is not None:
        raise ValueError(f"{found} holds an absolute host path; such an envelope cannot be "
                         "handed on")
    name = collection or record["evaluation_results"][0]["source_data"]["dataset_name"]
    relative = (f"data/{_segment(name)}/{_segment(developer)}/{_segment(model)}/"
                f"{file_uuid(record['evaluation_id'])}.json")
    return relative, record


def export_eee(files: list[Path], target: Path, schema_version: str = DEFAULT_SCHEMA,
               collection: str | None = None, host_roots: tuple[str, ...] = ()) -> ExportReport:
    """Write every stored envelope of ``files`` under ``target/data/...``, each file whole;
    ``host_roots``: folders of this host no exported record may name."""
    if schema_version not in SCHEMA_VERSIONS:
        raise ApgError("APG_USAGE", f"--schema {schema_version}: choose one of "
                       f"{', '.join(SCHEMA_VERSIONS)}", exit_code=2)
    if target.exists() and not target.is_dir():
        raise ApgError("APG_EXPORT_FAILED", f"{target} exists and is not a folder: name a "
                       "folder for the export", exit_code=2)
    report = ExportReport()
    for path in files:
        try:
            envelope = read_envelope(path)
            relative, record = exported(envelope.as_json(), schema_version, collection,
                                        host_roots)
        except ApgError as exc:
            report.skipped.append((str(path), f"unreadable: {exc.message}"))
            continue
        except ValueError as exc:
            report.skipped.append((path.name, str(exc)))
            continue
        destination = target / relative
        if not is_within(destination, target):  # _segment forbids it; checked where it is used
            report.skipped.append((envelope.evaluation_id, f"{relative} leaves {target}"))
            continue
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        if destination.is_file() and destination.read_text(encoding="utf-8") == text:
            report.unchanged.append(relative)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(destination, text)
        report.written.append(relative)
    return report
