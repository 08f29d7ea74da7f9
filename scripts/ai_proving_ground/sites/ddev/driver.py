"""The ``ddev`` site driver: a Drupal site under DDEV, reached with ``ddev exec drush ...``.

Every call is one ``ddev exec`` round trip (about a second on a real machine), counted in
:attr:`DdevSite.round_trips`. State is read by ``probe.php``, run with ``drush php:script``,
which answers a whole :class:`StateQuery` as one JSON line. Running ``ddev`` lives in
:mod:`.execute`, the project mount in :mod:`.mount`, decoding the probe's answer in
:mod:`.answers` and reading a recipe tree in :mod:`.recipe_plan`.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
import posixpath
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_write_bytes, is_within
from ai_proving_ground.sites.base import (
    ContentSelector,
    ModuleState,
    PendingUpdate,
    RecipeReport,
    SiteDriver,
    StateAnswer,
    StateQuery,
    register_driver,
)
from ai_proving_ground.sites.ddev.answers import decode_answer, decode_documents
from ai_proving_ground.sites.ddev.dumps import check_gzip, importable, move_into_place
from ai_proving_ground.sites.ddev.entity_update import COMMAND as ENTITY_UPDATE
from ai_proving_ground.sites.ddev.entity_update import CREATE_COMMAND as ENTITY_CREATE
from ai_proving_ground.sites.ddev.entity_update import entity_create_request, entity_update_request
from ai_proving_ground.sites.ddev.execute import (
    DRUSH_VERBATIM,
    SHELL_INERT,
    ddev_binary,
    json_output,
    last_json_object,
    output_invalid,
    probe_invalid,
    run_ddev,
    shell_inert,
)
from ai_proving_ground.sites.ddev.mount import Mount, under_root
from ai_proving_ground.sites.ddev.project import ProjectFacts, parse_describe, require_running
from ai_proving_ground.sites.ddev.recipe_plan import recipe_plan, stage_recipe_tree
from ai_proving_ground.sites.ddev.versions import require_drush_13

PROBE_FILE = Path(__file__).with_name("probe.php")
"""The shipped probe; used in place when it sits inside the project, else staged into it."""

MAX_INLINE_REQUEST = 64 * 1024
"""Longest request passed as an argument; Linux refuses single arguments over 128 KiB."""

_MACHINE_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")


@register_driver("ddev")
class DdevSite(SiteDriver):
    """A Drupal site under DDEV whose project root (app root) is :attr:`approot`."""

    # ------------------------------------------------------------------ reads

    def __init__(self, approot: Path) -> None:
        super().__init__(approot)
        self.mount = Mount(approot)
        self._project: ProjectFacts | None = None
        # core:status paths do not change while a command runs; reset needs them twice.
        self._status: dict[str, Any] | None = None

    def read_state(self, query: StateQuery) -> StateAnswer:
        """Answer every question in ``query`` with one ``drush php:script`` round trip."""
        return decode_answer(self._probe(dataclasses.asdict(query)), query)

    def export_config(self, names: Sequence[str]) -> dict[str, Any]:
        """Active config by exact name; names the site lacks are left out for the caller."""
        if not names:
            return {}
        config = self.read_state(StateQuery(config=tuple(names))).config
        return {name: config[name] for name in names if config.get(name) is not None}

    def all_config(self) -> dict[str, Any]:
        """Every active config object: its names (the probe's ``listAll('')``), then their values
        (two round trips, whatever the number of objects)."""
        names = self.read_state(StateQuery(config_prefixes=("",))).config_names.get("", [])
        return self.export_config(sorted(names))

    def export_content(self, selectors: Sequence[ContentSelector]) -> list[dict[str, Any]]:
        """Matching entities as core default-content documents, made by the probe."""
        if not selectors:
            return []
        request = {"content_export": [dataclasses.asdict(s) for s in selectors]}
        return decode_documents(self._probe(request))

    def status(self) -> dict[str, Any]:
        """``drush core:status --format=json``: one flat object (asked once per driver)."""
        if self._status is None:
            result = self._drush("core:status", "--format=json")
            data = json_output(result.stdout, "drush core:status --format=json")
            if not isinstance(data, dict):
                raise output_invalid("drush core:status --format=json", result.stdout)
            self._status = data
        return dict(self._status)

    def public_files_dir(self) -> Path:
        """``public://`` on the host: the status ``files`` path under the Drupal root."""
        status = self.status()
        files = status.get("files")
        if not isinstance(files, str) or not files:
            raise ApgError(
                "APG_DDEV_OUTPUT_INVALID",
                "drush core:status reports no public files path ('files'); is the site "
                "installed? Check with: ddev exec drush core:status",
            )
        return self.mount.host_path(under_root(status, files), "the public files directory")

    def private_files_dir(self) -> Path | None:
        """``private://`` on the host, or ``None`` when the site configures none."""
        status = self.status()
        private = status.get("private")
        if not isinstance(private, str) or not private:
            return None
        return self.mount.host_path(under_root(status, private), "the private files directory")

    # ----------------------------------------------------------------- writes

    def apply_recipe(self, recipe_dir: Path) -> RecipeReport:
        """``drush recipe``; drush rolls config back on failure.

        The container sees only the project, so a recipe from elsewhere (the installed tool's
        shipped fixtures, a symlink out of the project) is staged into it first.
        """
        if not (recipe_dir / "recipe.yml").is_file():
            raise ApgError(
                "APG_RECIPE_NOT_FOUND",
                f"{recipe_dir} has no recipe.yml; point at a Drupal recipe directory",
                exit_code=2,
            )
        recipe = self._recipe_in_project(recipe_dir)
        target = self.mount.container_path(recipe)
        shell_inert(target)
        require_drush_13(self.status())
        plan = recipe_plan(recipe, self.approot.resolve(), self.project().docroot)
        before = self.read_state(StateQuery(modules=True, entities=plan.content))
        self._drush("recipe", target)
        after = _enabled(self.read_state(StateQuery(modules=True)).modules)
        existed = {u for u, record in before.entities.items() if record is not None}
        return RecipeReport(
            recipe=recipe.name,
            modules_installed=tuple(sorted(after - _enabled(before.modules))),
            config_written=plan.config,
            content_created=tuple(u for u in plan.content if u not in existed),
            content_skipped=tuple(u for u in plan.content if u in existed),
        )

    def install_modules(self, names: Sequence[str]) -> list[str]:
        """``drush pm:install -y``; what was new is the difference of ``pm:list`` around it."""
        wanted = _machine_names(names, "module")
        if not wanted:
            return []
        before = self._enabled_modules()
        self._drush("pm:install", "-y", *wanted)
        return sorted(self._enabled_modules() - before)

    def uninstall_modules(self, names: Sequence[str]) -> list[str]:
        """``drush pm:uninstall -y`` on those installed; drush refuses needed dependencies."""
        wanted = _machine_names(names, "module")
        if not wanted:
            return []
        before = self._enabled_modules()
        # drush fails on a module that is not installed; here that is simply nothing to do.
        present = [name for name in wanted if name in before]
        if not present:
            return []
        self._drush("pm:uninstall", "-y", *present)
        return sorted(before - self._enabled_modules())

    def dump_database(self, dest: Path) -> None:
        """``drush sql:dump --gzip`` into the project, then moved to ``dest`` (gzipped SQL)."""
        host_tmp = self.mount.stage_path("tmp", f"dump-{uuid.uuid4().hex}.sql")
        produced = host_tmp.with_name(host_tmp.name + ".gz")  # drush --gzip appends .gz
        try:
            self._drush("sql:dump", f"--result-file={self.mount.container_path(host_tmp)}", "--gzip")
            self._sync_files()  # with Mutagen the dump reaches the host only after a sync
            check_gzip(produced)
            move_into_place(produced, dest)
        finally:
            for leftover in (host_tmp, produced):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

    def keep_database(self, dest: Path, level: int) -> None:
        """drush's ``sql:dump --gzip`` (:meth:`dump_database`), kept as drush compressed it."""
        self.dump_database(dest)

    def restore_database(self, src: Path) -> None:
        """Replace the database with ``ddev import-db``.

        ``import-db`` drops the database before replaying the dump, so tables created after
        the dump (say by a module an agent installed) do not survive a reset, as they would
        if the dump were piped through ``drush sql:cli``. It also reads the host file
        directly, gzipped or not, so a baseline outside the project mount needs no copy and
        nothing is streamed through ``docker exec``'s stdin.
        """
        if not src.is_file():
            raise ApgError(
                "APG_DDEV_DUMP_MISSING",
                f"no database dump at {src}; capture one first (dump_database / provision)",
            )
        self.project()
        with importable(src) as path:
            self._run(["import-db", f"--file={path}", "--no-progress"])

    def rebuild_caches(self) -> None:
        """``drush cr``."""
        self._drush("cr")

    def drush(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Any drush command line, arguments passed verbatim; its exit code is the caller's to read.

        What ``apg drush`` runs for people and agents (the oracle's reference steps carry YAML,
        which the shell-inert form could not pass).
        """
        command = self.drush_command(args)
        self.round_trips += 1
        return run_ddev(command[0], self.approot, command[1:], check=False)

    def drush_command(self, args: Sequence[str]) -> list[str]:
        """The ``ddev exec`` command line :meth:`drush` runs (the site broker runs it too).

        ``entity:update`` and ``entity:create``, which drush lacks (its entity:create asks for
        each field), are apg site's, run by the probe (:mod:`.entity_update`).
        """
        self.project()
        if list(args[:1]) in ([ENTITY_UPDATE], [ENTITY_CREATE]):
            build = entity_update_request if args[0] == ENTITY_UPDATE else entity_create_request
            request = build(args[1:], MAX_INLINE_REQUEST)
            return [ddev_binary(), *DRUSH_VERBATIM, *self._probe_arguments(request)]
        return [ddev_binary(), *DRUSH_VERBATIM, *args]

    def run_updates(self) -> list[PendingUpdate]:
        """``drush updatedb -y`` when the probe lists pending updates; return that list.

        The list is the probe's, as the doctor and reset see it, so an update is named one way
        everywhere (drush's updatedb:status words them differently).
        """
        pending = self.read_state(StateQuery(pending_updates=True)).pending_updates
        if pending:
            self._drush("updatedb", "-y")
        return pending

    # ------------------------------------------------------------- internals

    def project(self) -> ProjectFacts:
        """``ddev describe -j``, asked once: a project that is not running is refused."""
        if self._project is None:
            facts = parse_describe(run_ddev(ddev_binary(), self.approot, ["describe", "-j"]).stdout)
            require_running(facts)
            self._project = facts
        return self._project

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run ``ddev <args>`` in the app root: one round trip."""
        binary = ddev_binary()
        self.round_trips += 1
        return run_ddev(binary, self.approot, args)

    def _drush(self, *args: str) -> subprocess.CompletedProcess[str]:
        for arg in args:
            shell_inert(arg)
        self.project()
        return self._run(["exec", "drush", *args])

    def _recipe_in_project(self, recipe_dir: Path) -> Path:
        """The recipe itself when it lies in the project, else a staged copy of its tree."""
        resolved = recipe_dir.resolve()
        if is_within(resolved, self.approot.resolve()):
            return resolved
        staged = stage_recipe_tree(resolved, self.mount.stage_path("recipes", resolved.name))
        self._sync_files()
        return staged

    def host_files_changed(self) -> None:
        """With Mutagen, sync what the host wrote (reset's tree and files) into the container."""
        self._sync_files()

    def _sync_files(self) -> None:
        """With Mutagen, a file written on either side reaches the other only after a sync."""
        if self.project().mutagen_enabled:
            run_ddev(ddev_binary(), self.approot, ["mutagen", "sync"])

    def _probe(self, request: dict[str, Any]) -> dict[str, Any]:
        """One ``drush php:script`` round trip with the shipped probe; its JSON answer."""
        with self._request_argument(request) as argument:
            result = self._drush(*self._probe_arguments(argument))
        data = last_json_object(result.stdout)
        if data is None:
            raise probe_invalid(f"the probe printed no JSON object; stdout began: {result.stdout[:200]!r}")
        return data

    def _probe_arguments(self, argument: str) -> list[str]:
        """``php:script PROBE --script-path=DIR -- ARGUMENT``: the drush arguments of one probe run."""
        probe = self._probe_container_path()
        return ["php:script", probe, f"--script-path={posixpath.dirname(probe)}", "--", argument]

    def _probe_container_path(self) -> str:
        shipped = PROBE_FILE.resolve()
        if is_within(shipped, self.approot.resolve()):
            in_place = self.mount.container_path(shipped)
            if all(ch in SHELL_INERT for ch in in_place):
                return in_place
        staged = self.mount.stage_path("probe.php")
        payload = shipped.read_bytes()
        if not staged.is_file() or staged.read_bytes() != payload:
            atomic_write_bytes(staged, payload)
            self._sync_files()
        return self.mount.container_path(staged)

    @contextlib.contextmanager
    def _request_argument(self, request: dict[str, Any]) -> Iterator[str]:
        """The request as one base64 argument, or ``@file`` when it is too long for one."""
        try:
            encoded = json.dumps(request, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise ApgError(
                "APG_DDEV_QUERY_INVALID", f"the query cannot be sent as JSON: {exc}", exit_code=2
            ) from None
        inline = base64.b64encode(encoded).decode("ascii")
        if len(inline) <= MAX_INLINE_REQUEST:
            yield inline
            return
        path = self.mount.stage_path("requests", f"{uuid.uuid4().hex}.json")
        atomic_write_bytes(path, encoded)
        self._sync_files()
        try:
            yield "@" + self.mount.container_path(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _enabled_modules(self) -> set[str]:
        result = self._drush("pm:list", "--type=module", "--status=enabled", "--format=json")
        if not result.stdout.strip():
            return set()
        data = json_output(result.stdout, "drush pm:list --format=json")
        if isinstance(data, list) and not data:
            return set()
        if not isinstance(data, dict):
            raise output_invalid("drush pm:list --format=json", result.stdout)
        return {
            str(name)
            for name, row in data.items()
            if not isinstance(row, dict) or str(row.get("status", "Enabled")) == "Enabled"
        }

def _enabled(modules: dict[str, ModuleState]) -> set[str]:
    return {name for name, state in modules.items() if state.enabled}


def _machine_names(names: Sequence[str], what: str) -> list[str]:
    for name in names:
        if not name or name[0].isdigit() or any(ch not in _MACHINE_NAME for ch in name):
            raise ApgError(
                "APG_NAME_INVALID",
                f"{what} name {name!r} is not a machine name (lowercase letters, digits, _)",
                exit_code=2,
            )
    return list(dict.fromkeys(names))
