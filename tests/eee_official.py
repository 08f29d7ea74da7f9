"""Every envelope a test or the demo makes, checked with the official every_eval_ever package.

The ``eee`` nox session installs one published version of the package (0.2.3rc1 carries the
0.2.2 schema and models byte for byte; 0.3.0 carries 0.3.0) and runs the envelope-producing
tests with ``--official-eee=VERSION``. Each envelope then passes, under that version: the
pydantic models in strict JSON mode, the bundled JSON Schema, and the package's own file
validator on a datastore-style path (``data/<collection>/<developer>/<model>/<uuid4>.json``),
with its semantic checks where the version has them. Warnings do not fail; errors do. The
session fails when no envelope was checked, so a run that checked nothing cannot pass.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import json
import tempfile
import uuid
from pathlib import Path
from typing import Any

import jsonschema

PACKAGE = "every-eval-ever"
# Published package version -> the schema version it bundles.
SCHEMA_OF_PACKAGE = {"0.2.3rc1": "0.2.2", "0.3.0": "0.3.0"}


class Official:
    """The installed package, once its version has been checked against the one asked for."""

    def __init__(self, wanted: str) -> None:
        if wanted not in SCHEMA_OF_PACKAGE:
            raise ValueError(f"--official-eee={wanted}: choose one of {sorted(SCHEMA_OF_PACKAGE)}")
        try:
            installed = importlib.metadata.version(PACKAGE)
        except importlib.metadata.PackageNotFoundError as exc:
            raise ValueError(f"--official-eee={wanted}: {PACKAGE} is not installed "
                             "(run `nox -s eee`)") from exc
        if installed != wanted:
            raise ValueError(f"--official-eee={wanted}: {PACKAGE} {installed} is installed")
        self.version = wanted
        schema_module = importlib.import_module("every_eval_ever.schema")
        self.schema: dict[str, Any] = schema_module.schema_json("eval.schema.json")
        if self.schema.get("version") != SCHEMA_OF_PACKAGE[wanted]:
            raise ValueError(f"{PACKAGE} {wanted} bundles schema {self.schema.get('version')!r}")
        self.model = importlib.import_module("every_eval_ever.eval_types").EvaluationLog
        try:  # 0.3.0 moved the file validator into a package of its own
            validator = importlib.import_module("every_eval_ever.validator")
        except ImportError:
            validator = importlib.import_module("every_eval_ever.validate")
        self.validate_aggregate = validator.validate_aggregate
        self.semantic = "run_semantic_checks" in inspect.signature(self.validate_aggregate).parameters
        self.checked = 0

    def errors(self, envelope: Any) -> list[str]:
        """What this version of the package rejects in ``envelope`` (empty when it passes)."""
        text = json.dumps(envelope, allow_nan=False)
        found: list[str] = []
        try:
            self.model.model_validate_json(text, strict=True)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            found.append(f"pydantic strict: {exc}")
        found += [f"JSON Schema {list(e.absolute_path)}: {e.message}"
                  for e in jsonschema.Draft7Validator(self.schema).iter_errors(envelope)]
        found += self._file_errors(envelope, text)
        self.checked += 1
        return found

    def _file_errors(self, envelope: Any, text: str) -> list[str]:
        developer, _, model = str(envelope["model_info"]["id"]).rpartition("/")
        repo_path = f"data/apg/{developer or 'unknown'}/{model}/{uuid.uuid4()}.json"
        with tempfile.TemporaryDirectory() as root:
            path = Path(root, repo_path)
            path.parent.mkdir(parents=True)
            path.write_text(text, encoding="utf-8")
            options = {"repo_path": repo_path, "run_semantic_checks": True} if self.semantic else {}
            report = self.validate_aggregate(path, **options)
        return [f"validate_aggregate: {error}" for error in report.errors]


    def exported_errors(self, root: Path, path: Path) -> list[str]:
        """What the package's file validator says of an exported file where it lies (``root``
        holds ``data/``): errors and warnings both, since merge-ready means neither."""
        repo_path = path.relative_to(root).as_posix()
        options = {"repo_path": repo_path, "run_semantic_checks": True} if self.semantic else {}
        report = self.validate_aggregate(path, **options)
        self.checked += 1
        return ([f"error: {e}" for e in report.errors]
                + [f"warning: {w}" for w in getattr(report, "warnings", [])])


_active: Official | None = None


def activate(wanted: str | None) -> None:
    """Called once by the root conftest with the ``--official-eee`` value (None: off)."""
    global _active
    _active = Official(wanted) if wanted else None


def active() -> Official | None:
    return _active


def check(envelope: Any) -> None:
    """Assert the active official package accepts ``envelope``; nothing when none is active."""
    if _active is not None:
        errors = _active.errors(envelope)
        assert not errors, f"every-eval-ever {_active.version} rejects the envelope:\n" + "\n".join(errors)


def check_exported(root: Path, path: Path) -> None:
    """Assert the active official package finds an exported file merge-ready (no error, no
    warning); nothing when none is active."""
    if _active is not None:
        found = _active.exported_errors(root, path)
        assert not found, f"every-eval-ever {_active.version} on {path}:\n" + "\n".join(found)
