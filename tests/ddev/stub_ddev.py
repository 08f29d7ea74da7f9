"""A stand-in for the ``ddev`` executable, answering from a JSON scenario the test writes.

The test fixture copies this file to ``<tmp>/bin/ddev`` behind a ``#!<sys.executable>`` line
and puts that directory first on PATH. Each invocation:

Its settings come from ``APG_STUB_DDEV_*`` variables or ``ddev-stub.json`` beside it. It
- appends one JSON line to ``$APG_STUB_DDEV_LOG``: ``argv``, the normalised ``command``
  (``exec`` flags dropped), ``cwd``, and, when it can tell, the decoded probe ``request``
  or the SQL an ``import-db`` was given (``imported``);
- answers with the first rule of ``$APG_STUB_DDEV_SCENARIO`` whose ``match`` is a prefix of
  the command: ``stdout``, ``stderr`` and ``exit``, as drush and DDEV would. A rule with
  ``"once": true`` is used up after one answer. ``"result_file": "<sql>"`` writes the dump
  that ``drush sql:dump --result-file=... [--gzip]`` would leave in the project.

The container's ``/var/www/html`` maps to the directory ddev runs in, as DDEV mounts it.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import sys
from pathlib import Path
from typing import Any

CONTAINER_ROOT = "/var/www/html"
VERBATIM_DRUSH = 'exec drush "$@"'
EXEC_FLAGS_WITH_VALUE = {"-s", "--service", "-d", "--dir", "-u", "--user", "-p", "--project"}


def normalise(argv: list[str]) -> list[str]:
    """``exec [flags] [--] cmd...`` becomes ``exec cmd...``; other commands stay as given.

    ``exec --raw -- bash -c 'exec drush "$@"' drush ARGS`` (drush with verbatim arguments)
    becomes ``exec drush ARGS``, as bash runs it.
    """
    if not argv or argv[0] not in {"exec", "."}:
        return list(argv)
    rest = argv[1:]
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag == "--":
            break
        if flag in EXEC_FLAGS_WITH_VALUE:
            rest.pop(0)
    if rest[:3] == ["bash", "-c", VERBATIM_DRUSH] and rest[3:4] == ["drush"]:
        rest = ["drush", *rest[4:]]
    return ["exec", *rest]


def host_path(container_path: str) -> Path:
    relative = container_path[len(CONTAINER_ROOT) :].lstrip("/")
    return Path.cwd() / relative


def decode_request(command: list[str]) -> Any:
    if command[:3] != ["exec", "drush", "php:script"] or "--" not in command:
        return None
    argument = command[command.index("--") + 1]
    if argument.startswith("@"):
        return json.loads(host_path(argument[1:]).read_text(encoding="utf-8"))
    return json.loads(base64.b64decode(argument, validate=True))


def imported_sql(command: list[str]) -> str | None:
    for arg in command:
        if arg.startswith("--file="):
            data = Path(arg.split("=", 1)[1]).read_bytes()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            return data.decode("utf-8")
    return None


def pick_rule(scenario: dict[str, Any], command: list[str], state_path: Path) -> Any:
    used = set(json.loads(state_path.read_text())) if state_path.exists() else set()
    for index, rule in enumerate(scenario.get("rules", [])):
        match = rule["match"]
        if command[: len(match)] != match or index in used:
            continue
        if rule.get("once"):
            used.add(index)
            state_path.write_text(json.dumps(sorted(used)))
        return rule
    return None


def write_result_file(command: list[str], sql: str) -> None:
    for arg in command:
        if arg.startswith("--result-file="):
            target = host_path(arg.split("=", 1)[1])
            if "--gzip" in command:
                target.with_name(target.name + ".gz").write_bytes(gzip.compress(sql.encode()))
            else:
                target.write_text(sql, encoding="utf-8")


def stub_settings() -> dict[str, str]:
    """The environment's APG_STUB_DDEV_* names, else ddev-stub.json beside this script.

    An adapter runs with an allow-listed environment, so the ddev it calls finds its scenario
    in the file the test wrote next to it.
    """
    beside = Path(__file__).with_name("ddev-stub.json")
    settings: dict[str, str] = json.loads(beside.read_text(encoding="utf-8")) if beside.is_file() else {}
    names = ("APG_STUB_DDEV_SCENARIO", "APG_STUB_DDEV_LOG", "APG_STUB_DDEV_LIB")
    settings.update({name: os.environ[name] for name in names if name in os.environ})
    return settings


def main(argv: list[str]) -> int:
    settings = stub_settings()
    scenario_path = Path(settings["APG_STUB_DDEV_SCENARIO"])
    log_path = Path(settings["APG_STUB_DDEV_LOG"])
    scenario = json.loads(scenario_path.read_text(encoding="utf-8"))
    command = normalise(argv)
    entry: dict[str, Any] = {"argv": argv, "command": command, "cwd": os.getcwd()}
    try:
        entry["request"] = decode_request(command)
    except (ValueError, OSError) as exc:
        entry["request_error"] = repr(exc)
    if command[:1] == ["import-db"]:
        entry["imported"] = imported_sql(command)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(json.dumps(entry) + "\n")

    rule = pick_rule(scenario, command, log_path.with_suffix(".state"))
    if rule is None and scenario.get("site"):
        # The site model (stub_site.py beside the test that copied this file) answers the rest.
        sys.path.insert(0, settings["APG_STUB_DDEV_LIB"])
        from stub_site import Site

        answered = Site(Path(scenario["site"]), Path.cwd()).answer(command, entry.get("request"))
        if answered is not None:
            sys.stdout.write(answered[0])
            sys.stderr.write(answered[1])
            return answered[2]
    if rule is None:
        sys.stderr.write(f"stub ddev: no scenario rule for {command}\n")
        return 90
    if "result_file" in rule:
        write_result_file(command, rule["result_file"])
    sys.stdout.write(rule.get("stdout", ""))
    sys.stderr.write(rule.get("stderr", ""))
    return int(rule.get("exit", 0))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
