"""A campaign's provenance: what it ran on, by hash and version, in one place.

:func:`collect` gives ``campaign.json``'s ``provenance`` (``schemas/campaign_record.schema.json``):
the spec file and its SHA-256; the fixture set, its set key and the baseline (tag and commit);
the grader tree's SHA-256 (``baselines/grader_tree``, as the envelope's ``grader_tree_sha256``);
each task's SHA-256 (as run.json's ``task_sha256``); the product's version and the SHA-256 of its
code (every file of the installed package but caches); and each adapter the plan runs, with the
SHA-256 of its file and the ``--version`` of every command its ``## Commands:`` header names
(its agent CLI and runtime), asked once, with a deadline, through :mod:`proc`. A command that is
not on PATH is recorded as ``absent``, one that fails or hangs as such: provenance never stops a
campaign. The dataset's hash, the seed and what each arm gives (``given``: skills and
instructions by hash, from :mod:`arms.given`) are campaign.json's own fields, not repeated here.

:func:`fingerprints` is what ``apg campaign resume`` compares (:func:`changes`): all of that but
paths, the baseline's commit and the CLIs' install paths, which may differ for the same inputs
(a template made again has a new commit; the same CLI may sit elsewhere).
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ai_proving_ground import __version__, proc
from ai_proving_ground.baselines import grader_tree
from ai_proving_ground.baselines.reset import require_baseline
from ai_proving_ground.baselines.store import Baseline, read_metadata
from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.fixtures import load_set
from ai_proving_ground.paths import PACKAGE_DIR
from ai_proving_ground.settings import Settings
from ai_proving_ground.tasks.adapters import find_adapter

VERSION_TIMEOUT_S = 10.0  # a CLI's --version answers in well under a second; a hung one must not stall
VERSION_CHARS = 200
# Where a value may differ while the inputs are the same (see the module doc).
UNCOMPARED = frozenset({"path", "commit"})
# The fingerprints a bed gives (as :func:`fingerprints` names them), and those with the code
# judging it: what an executor that makes its beds where they run (a Ray node) compares there.
BED_KEYS = ("set_key", "baseline.tag", "grader_tree_sha256")
NODE_KEYS = (*BED_KEYS, "product.code_sha256")


def collect(campaign: Campaign, template: Path, settings: Settings,
            host: Mapping[str, str], bed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The provenance of ``campaign`` run on beds cloned from ``template`` (provisioned);
    ``host`` is the environment whose PATH the adapters get. ``bed``: the bed's own facts
    (:func:`bed_facts`) as read where the bed is (a Ray node's DDEV project), so nothing of
    ``template`` is read here; None: read here."""
    spec = campaign.spec
    found = bed_facts(campaign, template, settings, host) if bed is None else bed
    return {
        "spec": {"path": str(spec.path), "sha256": _file_sha256(spec.path)},
        "fixtures": list(campaign.fixtures),
        "set_key": found["set_key"],
        "baseline": found["baseline"],
        "grader_tree_sha256": found["grader_tree_sha256"],
        "tasks": {task.id: task.sha256 for task in campaign.tasks},
        "product": {"version": __version__, "code_sha256": code_sha256()},
        "adapters": found["adapters"],
    }


def bed_facts(campaign: Campaign, bed: Path, settings: Settings,
              host: Mapping[str, str]) -> dict[str, Any]:
    """What :func:`collect` reads from the bed: its set key, baseline (tag and commit), grader
    tree and the adapters it gives, with their CLIs' versions on ``host``'s PATH."""
    baseline, node = _bed(bed, campaign.fixtures, settings, code=False)  # the code: collect's
    return {"set_key": node["set_key"],
            "baseline": {"tag": node["baseline.tag"], "commit": read_metadata(baseline).commit},
            "grader_tree_sha256": node["grader_tree_sha256"],
            "adapters": adapters(campaign, bed, host)}


def facts_changes(first: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """Each of two beds' :func:`bed_facts` that differs, as ``what (first's -> other's)``;
    paths and commits left out, as resume leaves them (the module doc)."""
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    _flatten("", first, before)
    _flatten("", other, after)
    return [f"{key} ({_short(before.get(key))} -> {_short(after.get(key))})"
            for key in sorted(before.keys() | after.keys()) if before.get(key) != after.get(key)]


def adapters(campaign: Campaign, template: Path, host: Mapping[str, str]) -> dict[str, Any]:
    """Each adapter the plan runs: its file, source, SHA-256 and its commands' versions (each
    distinct command asked once)."""
    found = {name: find_adapter(name, template) for _, name, _ in campaign.spec.adapter_refs()}
    commands = cli_versions([c for a in found.values() for c in a.header.commands], host)
    return {name: {"path": str(adapter.path), "source": adapter.source,
                   "sha256": _file_sha256(adapter.path),
                   "commands": {c: commands[c] for c in adapter.header.commands}}
            for name, adapter in found.items()}


def cli_versions(commands: Iterable[str], host: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """``COMMAND --version`` for each command, found on ``host``'s PATH: ``status`` ok (with
    ``version``: its first line), absent, failed (with ``exit_code``) or timed_out; a command
    named twice is asked once."""
    env = proc.bed_env(host)  # PATH as the adapters get it; a HOME of its own, no credentials
    return {command: _version(command, env) for command in dict.fromkeys(commands)}


def _version(command: str, env: proc.BedEnv) -> dict[str, Any]:
    path = shutil.which(command, path=env.get("PATH", os.defpath))
    if path is None:
        return {"status": "absent", "path": None, "version": None}
    done = proc.run([path, "--version"], cwd=Path(env["HOME"]), env=env,
                    timeout_s=VERSION_TIMEOUT_S)
    text = (done.stdout or done.stderr).decode("utf-8", errors="replace")
    line = next((s.strip() for s in text.splitlines() if s.strip()), "")[:VERSION_CHARS]
    if done.timed_out:
        return {"status": "timed_out", "path": path, "version": None}
    if done.exit_code != 0:
        return {"status": "failed", "path": path, "version": line or None,
                "exit_code": done.exit_code}
    return {"status": "ok", "path": path, "version": line or None}


def code_sha256(root: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the package's files (relative path and bytes, sorted), bytecode caches left
    out (they change with the interpreter, not the code). About 15 ms for the package."""
    digest = hashlib.sha256()
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and "__pycache__" not in p.relative_to(root).parts)
    for path in files:
        relative = path.relative_to(root).as_posix().encode("utf-8")
        data = path.read_bytes()
        digest.update(len(relative).to_bytes(8, "big") + relative + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def fingerprints(record: Mapping[str, Any]) -> dict[str, Any]:
    """What resume compares, from a campaign.json's data: the dataset's and arms' hashes and the
    provenance, as ``dotted.path -> value`` (paths and commits left out: the module doc)."""
    flat: dict[str, Any] = {"dataset.sha256": record.get("dataset", {}).get("sha256")}
    _flatten("given", record.get("given", {}), flat)
    _flatten("", record.get("provenance", {}), flat)
    return flat


def changes(recorded: Mapping[str, Any], current: Mapping[str, Any],
            elsewhere: Iterable[str] = ()) -> list[str]:
    """Each fingerprint that differs, as ``what (was -> now)``, in a stable order; those named
    in ``elsewhere`` are left out (compared where the beds are made: :data:`BED_KEYS`)."""
    before, after = fingerprints(recorded), fingerprints(current)
    keys = sorted((before.keys() | after.keys()) - set(elsewhere))
    return [f"{key} ({_short(before.get(key))} -> {_short(after.get(key))})"
            for key in keys if before.get(key) != after.get(key)]


def bed_fingerprints(bed: Path, fixtures: Iterable[str], settings: Settings) -> dict[str, Any]:
    """:data:`NODE_KEYS` of ``bed`` (provisioned) and of the code running here."""
    return _bed(bed, fixtures, settings)[1]


def _bed(bed: Path, fixtures: Iterable[str], settings: Settings,
         code: bool = True) -> tuple[Baseline, dict[str, Any]]:
    """``bed``'s baseline and :data:`NODE_KEYS` (``code`` False: :data:`BED_KEYS`): one owner of
    these facts for the campaign's record (:func:`bed_facts`) and for each node's check of its
    own bed."""
    baseline = require_baseline(bed, list(fixtures), settings)
    fixture_set = load_set(list(fixtures), bed, settings=settings)
    return baseline, {
        "set_key": baseline.set_key, "baseline.tag": baseline.tag,
        "grader_tree_sha256": grader_tree.tree_sha256(grader_tree.fingerprint(bed, fixture_set)),
        **({"product.code_sha256": code_sha256()} if code else {})}


def bed_changes(expected: Mapping[str, Any], found: Mapping[str, Any]) -> list[str]:
    """Each of :data:`NODE_KEYS` where ``found`` (:func:`bed_fingerprints`) differs from
    ``expected`` (the campaign's :func:`fingerprints`), as ``what (campaign's -> bed's)``."""
    return [f"{key} ({_short(expected.get(key))} -> {_short(found.get(key))})"
            for key in NODE_KEYS if expected.get(key) != found.get(key)]


def _flatten(prefix: str, value: Any, into: dict[str, Any]) -> None:
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v
                                                 for v in value):  # skills: by name
        value = {str(v["name"]): v for v in value}
    if isinstance(value, dict):
        for key, inner in value.items():
            if key not in UNCOMPARED:
                _flatten(f"{prefix}.{key}" if prefix else str(key), inner, into)
    else:
        into[prefix] = value


def _short(value: Any) -> str:
    text = "absent" if value is None else str(value)
    return text if len(text) <= 24 else f"{text[:12]}…"


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
