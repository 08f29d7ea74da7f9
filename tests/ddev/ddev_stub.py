"""The stub ``ddev`` scenario, the real captures it answers with, and shared assertions.

Answers come from ``golden/`` (a real Drupal 10.3.7 / Drush 13.3.0 site, see its README)
wherever one exists: :func:`drush_capture` turns a capture into a stub rule.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from ai_proving_ground.errors import ApgError
from ai_proving_ground.gitutil import git

# An in-process command: main and its argv in, (exit code, stdout, stderr) out.
Cli = Callable[..., tuple[int, str, str]]

GOLDEN = Path(__file__).with_name("golden")
STUB_SOURCE = Path(__file__).with_name("stub_ddev.py")

# DDEV's `ddev exec` appends this to stderr on a non-zero exit (not in the captures, which ran
# drush directly); it repeats the command line, base64 request included.
DDEV_EXEC_FAILED = "Failed to execute command `{command}`: exit status {code}\n"


def golden(kind: str, name: str) -> dict[str, Any]:
    """One capture: ``golden/<kind>/<NN>-<name>.json`` (the number is left out)."""
    (path,) = sorted((GOLDEN / kind).glob(f"[0-9][0-9]-{name}.json"))
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def golden_config(name: str) -> str:
    """``drush config:get NAME --format=yaml`` as captured."""
    return (GOLDEN / "config" / f"{name}.yml").read_text(encoding="utf-8")


def describe_json(status: str = "running", mutagen: bool = False, docroot: str = "web") -> str:
    """``ddev describe -j``: JSON log lines, the project under ``raw`` (fields from DDEV's source)."""
    raw = {
        "approot": "/home/dev/bed",
        "docroot": docroot,
        "name": "bed",
        "status": status,
        "status_desc": status,
        "type": "drupal10",
        "primary_url": "https://bed.ddev.site",
        "database_type": "mariadb",
        "database_version": "10.11",
        "mutagen_enabled": mutagen,
    }
    log = {"level": "info", "msg": "NAME  TYPE  LOCATION  URL  STATUS", "time": "2026-12-01T09:00:00Z"}
    return json.dumps(log) + "\n" + json.dumps({**log, "raw": raw}) + "\n"


class Stub:
    """The scenario the stub ``ddev`` answers from, and the log of how it was called.

    ``ddev describe -j`` answers "running, no Mutagen" unless a test says otherwise; its calls
    are left out of :meth:`calls` (they are not round trips into the container).
    """

    def __init__(self, root: Path) -> None:
        self.scenario = root / "scenario.json"
        self.log = root / "ddev-calls.jsonl"
        self.rules: list[dict[str, Any]] = []
        self.site: Path | None = None
        self.defaults: list[dict[str, Any]] = [{"match": ["describe"], "stdout": describe_json()}]
        self._save()

    def on(self, *match: str, **answer: Any) -> None:
        self.rules.append({"match": list(match), **answer})
        self._save()

    def describe(self, **facts: Any) -> None:
        self.on("describe", stdout=describe_json(**facts))

    def drush_capture(self, name: str, *match: str, once: bool = False) -> dict[str, Any]:
        """Answer ``exec <match or the capture's argv>`` with a drush capture from golden/."""
        capture = golden("drush", name)
        argv = list(match) or capture["argv"]
        stderr = capture["stderr"]
        if capture["exit"] != 0:
            stderr += DDEV_EXEC_FAILED.format(command=" ".join(argv), code=capture["exit"])
        answer: dict[str, Any] = {"stdout": capture["stdout"], "stderr": stderr, "exit": capture["exit"]}
        if once:
            answer["once"] = True
        self.on("exec", *argv, **answer)
        return capture

    def probe_answers(self, answer: dict[str, Any], stdout_prefix: str = "", once: bool = False) -> None:
        extra = {"once": True} if once else {}
        self.on("exec", "drush", "php:script", stdout=stdout_prefix + json.dumps(answer) + "\n", **extra)

    def all_calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def calls(self) -> list[dict[str, Any]]:
        return [call for call in self.all_calls() if call["command"][:1] != ["describe"]]

    def commands(self) -> list[list[str]]:
        return [call["command"] for call in self.calls()]

    def use_site(self, state: Path) -> None:
        """Answer what no rule matches from the site model (stub_site.py) kept in ``state``."""
        self.site = state
        self._save()

    def _save(self) -> None:
        scenario: dict[str, Any] = {"rules": self.rules + self.defaults}
        if self.site is not None:
            scenario["site"] = str(self.site)
        self.scenario.write_text(json.dumps(scenario))


def expect_error(token: str, call: Any) -> ApgError:
    with pytest.raises(ApgError) as caught:
        call()
    error = caught.value
    assert error.token == token, str(error)
    assert "Traceback" not in error.message
    assert error.__cause__ is None
    assert error.__suppress_context__ or error.__context__ is None
    return error


def fresh_site_state() -> dict[str, Any]:
    """A just-installed Drupal 10.3.7 as the captures show it: modules, system.site, versions.

    The versions answer is the capture's, in the probe's present keys (package, version,
    source_reference; core's modules ship in drupal/core).
    """
    modules = golden("probe", "modules")["answer"]["modules"]
    versions = golden("probe", "versions")["answer"]["versions"]
    versions["modules"] = {
        name: {"package": "drupal/core", "version": info["version"], "source_reference": None}
        for name, info in versions["modules"].items()
    }
    site = yaml.safe_load(golden_config("system.site"))
    return {"modules": modules, "config": {"system.site": site}, "entities": {}, "versions": versions}


def new_project(approot: Path) -> Path:
    """A DDEV project as `ddev config --project-type=drupal10` leaves it, under git (the stub
    answers every project from one site model: one ``ddev`` at a time, as one database)."""
    (approot / ".ddev").mkdir(parents=True)
    (approot / ".ddev" / "config.yaml").write_text(
        f"name: {approot.name}\ntype: drupal10\ndocroot: web\n")
    (approot / "web" / "sites" / "default" / "files").mkdir(parents=True)
    (approot / "web" / "sites" / "default" / "files" / ".keep").write_text("")
    (approot / ".gitignore").write_text("/.ai-proving-ground/\n/vendor/\n")
    git(approot, ["init", "-q", "-b", "main"])
    git(approot, ["add", "-A"])
    git(approot, ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "project"])
    return approot
