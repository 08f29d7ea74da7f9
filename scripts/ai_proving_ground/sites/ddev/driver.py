"""The ``ddev`` site driver: a Drupal site under DDEV, reached with ``ddev exec drush ...``.

Every call is one ``ddev exec`` round trip (about a second on a real machine), counted in
:attr:`DdevSite.round_trips`. State is read by ``probe.php``, run with ``drush php:script``,
which answers a whole :class:`StateQuery` as one JSON line.

Why ``ddev exec drush`` and never ``ddev drush``: DDEV's custom commands (``ddev drush`` is one)
turn every failure into exit 1, while ``ddev exec`` keeps the real exit code.

Why not ``ddev exec --raw``: without a shell the container never reads ``$BASH_ENV``, which is
what puts the project's ``vendor/bin`` (and so ``drush``) on ``PATH``. Plain ``ddev exec``
joins the arguments into a ``bash -c`` line instead, so every argument sent through it is
checked against a shell-inert character set first (:func:`_shell_inert`).
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import errno
import json
import os
import posixpath
import shutil
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError
from ai_proving_ground.fsutil import atomic_target, atomic_write_bytes
from ai_proving_ground.sites.base import (
    CanvasTree,
    ComponentItem,
    ContentSelector,
    EntityRecord,
    ModuleState,
    PendingUpdate,
    RecipeReport,
    SiteDriver,
    StateAnswer,
    StateQuery,
    Versions,
    ViewResult,
    ViewRow,
    register_driver,
)
from ai_proving_ground.yamlio import load_yaml

CONTAINER_ROOT = "/var/www/html"
"""Where DDEV mounts the project (the app root) inside the web container."""

PROBE_FILE = Path(__file__).with_name("probe.php")
"""The shipped probe; used in place when it sits inside the project, else staged into it."""

STAGE_DIR = ".ai-proving-ground"
"""Driver scratch space inside the project, visible to the container through the mount."""

MAX_INLINE_REQUEST = 64 * 1024
"""Longest request passed as an argument; Linux refuses single arguments over 128 KiB."""

DDEV_MISSING_MESSAGE = (
    "ddev not found on PATH; install DDEV (https://ddev.com) or use the embedded site with "
    "AI_PG_SITE_DRIVER=sqlite"
)

_SHELL_INERT = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
_MACHINE_NAME = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")
_GZIP_MAGIC = b"\x1f\x8b"
_IMPORTABLE_SUFFIXES = (".sql", ".sql.gz", ".gz", ".tgz", ".tar", ".tar.gz", ".zip", ".bz2", ".xz")
_STDERR_TAIL_LINES = 6


@register_driver("ddev")
class DdevSite(SiteDriver):
    """A Drupal site under DDEV whose project root (app root) is :attr:`approot`."""

    # ------------------------------------------------------------------ reads

    def read_state(self, query: StateQuery) -> StateAnswer:
        """Answer every question in ``query`` with one ``drush php:script`` round trip."""
        data = self._probe(dataclasses.asdict(query))
        try:
            return _parse_answer(data, query)
        except _ShapeError as exc:
            raise _probe_invalid(f"the probe answer does not fit the query: {exc}") from None

    def export_config(self, names: Sequence[str]) -> dict[str, Any]:
        """Active config by exact name; names the site lacks are left out for the caller."""
        if not names:
            return {}
        config = self.read_state(StateQuery(config=tuple(names))).config
        return {name: config[name] for name in names if config.get(name) is not None}

    def export_content(self, selectors: Sequence[ContentSelector]) -> list[dict[str, Any]]:
        """Matching entities as core default-content documents, made by the probe."""
        if not selectors:
            return []
        request = {"content_export": [dataclasses.asdict(s) for s in selectors]}
        data = self._probe(request)
        try:
            return _parse_documents(data.get("content_export"))
        except _ShapeError as exc:
            raise _probe_invalid(f"the content export does not fit: {exc}") from None

    def status(self) -> dict[str, Any]:
        """``drush core:status --format=json``: one flat object."""
        result = self._drush("core:status", "--format=json")
        data = _json_output(result.stdout, "drush core:status --format=json")
        if not isinstance(data, dict):
            raise _output_invalid("drush core:status --format=json", result.stdout)
        return data

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
        return self._host_path(self._under_root(status, files), "the public files directory")

    def private_files_dir(self) -> Path | None:
        """``private://`` on the host, or ``None`` when the site configures none."""
        status = self.status()
        private = status.get("private")
        if not isinstance(private, str) or not private:
            return None
        return self._host_path(self._under_root(status, private), "the private files directory")

    # ----------------------------------------------------------------- writes

    def apply_recipe(self, recipe_dir: Path) -> RecipeReport:
        """``drush recipe`` on a recipe inside the project; drush rolls config back on failure."""
        recipe = self._inside_approot(recipe_dir, "recipe directory")
        if not (recipe / "recipe.yml").is_file():
            raise ApgError(
                "APG_RECIPE_NOT_FOUND",
                f"{recipe_dir} has no recipe.yml; point at a Drupal recipe directory",
                exit_code=2,
            )
        target = self._container_path(recipe)
        _shell_inert(target)
        plan = _recipe_plan(recipe, self.approot.resolve())
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
        host_tmp = self._stage_path("tmp", f"dump-{uuid.uuid4().hex}.sql")
        produced = host_tmp.with_name(host_tmp.name + ".gz")  # drush --gzip appends .gz
        try:
            self._drush("sql:dump", f"--result-file={self._container_path(host_tmp)}", "--gzip")
            if not produced.is_file():
                self._flush_mutagen()
            _check_gzip(produced)
            _move_into_place(produced, dest)
        finally:
            for leftover in (host_tmp, produced):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()

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
        with self._importable(src) as path:
            self._run(["import-db", f"--file={path}", "--no-progress"])

    def rebuild_caches(self) -> None:
        """``drush cr``."""
        self._drush("cr")

    def run_updates(self) -> list[PendingUpdate]:
        """``drush updatedb -y`` when ``updatedb:status`` lists anything; return that list."""
        pending = self._pending_updates()
        if pending:
            self._drush("updatedb", "-y")
        return pending

    # ------------------------------------------------------------- internals

    def _ddev(self) -> str:
        found = shutil.which("ddev")
        if found is None:
            raise ApgError("APG_DDEV_MISSING", DDEV_MISSING_MESSAGE, exit_code=2)
        return found

    def _run(self, args: Sequence[str]) -> subprocess.CompletedProcess[str]:
        """Run ``ddev <args>`` in the app root; a non-zero exit is APG_DDEV_FAILED."""
        argv = [self._ddev(), *args]
        self.round_trips += 1
        try:
            result = subprocess.run(
                argv,
                cwd=self.approot,
                stdin=subprocess.DEVNULL,  # no TTY, and nothing can wait for input
                capture_output=True,
                text=True,
                encoding="utf-8",
                errors="replace",
                check=False,
            )
        except OSError as exc:
            raise ApgError(
                "APG_DDEV_FAILED", f"could not run `{_render(args)}` in {self.approot}: {exc}"
            ) from None
        if result.returncode != 0:
            raise ApgError("APG_DDEV_FAILED", _failure_message(args, result))
        return result

    def _drush(self, *args: str) -> subprocess.CompletedProcess[str]:
        for arg in args:
            _shell_inert(arg)
        return self._run(["exec", "drush", *args])

    def _probe(self, request: dict[str, Any]) -> dict[str, Any]:
        """One ``drush php:script`` round trip with the shipped probe; its JSON answer."""
        probe = self._probe_container_path()
        with self._request_argument(request) as argument:
            result = self._drush(
                "php:script", probe, f"--script-path={posixpath.dirname(probe)}", "--", argument
            )
        data = _last_json_line(result.stdout)
        if not isinstance(data, dict):
            raise _probe_invalid(f"the probe printed no JSON object; stdout began: {result.stdout[:200]!r}")
        return data

    def _probe_container_path(self) -> str:
        shipped = PROBE_FILE.resolve()
        if shipped.is_relative_to(self.approot.resolve()):
            in_place = self._container_path(shipped)
            if all(ch in _SHELL_INERT for ch in in_place):
                return in_place
        staged = self._stage_path("probe.php")
        payload = shipped.read_bytes()
        if not staged.is_file() or staged.read_bytes() != payload:
            atomic_write_bytes(staged, payload)
        return self._container_path(staged)

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
        path = self._stage_path("requests", f"{uuid.uuid4().hex}.json")
        atomic_write_bytes(path, encoded)
        try:
            yield "@" + self._container_path(path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def _enabled_modules(self) -> set[str]:
        result = self._drush("pm:list", "--type=module", "--status=enabled", "--format=json")
        if not result.stdout.strip():
            return set()
        data = _json_output(result.stdout, "drush pm:list --format=json")
        if isinstance(data, list) and not data:
            return set()
        if not isinstance(data, dict):
            raise _output_invalid("drush pm:list --format=json", result.stdout)
        return {
            str(name)
            for name, row in data.items()
            if not isinstance(row, dict) or str(row.get("status", "Enabled")) == "Enabled"
        }

    def _pending_updates(self) -> list[PendingUpdate]:
        result = self._drush("updatedb:status", "--format=json")
        # With nothing pending drush prints nothing at all on stdout (the news is on stderr).
        if not result.stdout.strip():
            return []
        data = _json_output(result.stdout, "drush updatedb:status --format=json")
        if isinstance(data, dict):
            rows = list(data.values())
        elif isinstance(data, list):
            rows = data
        else:
            raise _output_invalid("drush updatedb:status --format=json", result.stdout)
        try:
            return [_pending_update(_obj(row, "update")) for row in rows]
        except _ShapeError:
            raise _output_invalid("drush updatedb:status --format=json", result.stdout) from None

    def _flush_mutagen(self) -> None:
        # With Mutagen, files written in the container reach the host only after a sync.
        with contextlib.suppress(ApgError):
            self._run(["mutagen", "sync"])

    @contextlib.contextmanager
    def _importable(self, src: Path) -> Iterator[Path]:
        """``src`` under a name whose suffix tells ``import-db`` how to read it."""
        if src.name.endswith(_IMPORTABLE_SUFFIXES):
            yield src.resolve()
            return
        with src.open("rb") as handle:
            suffix = ".sql.gz" if handle.read(2) == _GZIP_MAGIC else ".sql"
        alias = self._stage_path("tmp", f"restore-{uuid.uuid4().hex}{suffix}")
        try:
            os.link(src, alias)
        except OSError:
            shutil.copyfile(src, alias)
        try:
            yield alias
        finally:
            with contextlib.suppress(FileNotFoundError):
                alias.unlink()

    def _stage_path(self, *parts: str) -> Path:
        path = self.approot.joinpath(STAGE_DIR, *parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def _inside_approot(self, path: Path, what: str) -> Path:
        resolved = path.resolve()
        if not resolved.is_relative_to(self.approot.resolve()):
            raise ApgError(
                "APG_PATH_UNSAFE",
                f"{what} {path} is outside the project {self.approot}; DDEV only mounts the "
                f"project (at {CONTAINER_ROOT}), so move it under the project, e.g. recipes/",
            )
        return resolved

    def _container_path(self, host_path: Path) -> str:
        relative = self._inside_approot(host_path, "path").relative_to(self.approot.resolve())
        return posixpath.join(CONTAINER_ROOT, relative.as_posix()).rstrip("/")

    def _host_path(self, container_path: str, what: str) -> Path:
        normal = posixpath.normpath(container_path)
        if normal == CONTAINER_ROOT:
            return self.approot
        if not normal.startswith(CONTAINER_ROOT + "/"):
            raise ApgError(
                "APG_DDEV_PATH_UNMAPPED",
                f"{what} is {container_path} in the container, outside the project mount "
                f"{CONTAINER_ROOT}, so it has no host path; move it under the project",
            )
        return self.approot.joinpath(*normal[len(CONTAINER_ROOT) + 1 :].split("/"))

    @staticmethod
    def _under_root(status: dict[str, Any], path: str) -> str:
        """A status path made absolute: relative ones are relative to the Drupal root."""
        root = status.get("root")
        base = root if isinstance(root, str) and root else CONTAINER_ROOT
        return posixpath.join(base, path)


# ---------------------------------------------------------------------------- recipes


@dataclasses.dataclass(frozen=True)
class _RecipePlan:
    """What a recipe (with its sub-recipes) declares: config it writes, content it holds."""

    config: tuple[str, ...]
    content: tuple[str, ...]


def _recipe_plan(recipe: Path, approot: Path) -> _RecipePlan:
    """Read the recipe tree on the host; drush does the real validation when applying."""
    config: set[str] = set()
    content: list[str] = []
    seen: set[Path] = set()
    pending = [recipe]
    while pending:
        current = pending.pop()
        if current in seen or not (current / "recipe.yml").is_file():
            continue
        seen.add(current)
        spec = _mapping(load_yaml(current / "recipe.yml"))
        config.update(p.stem for p in (current / "config").glob("*.yml"))
        actions = _mapping(_mapping(spec.get("config")).get("actions"))
        config.update(str(name).lstrip("?") for name in actions)
        for doc in sorted((current / "content").glob("**/*.yml")):
            meta = _mapping(_mapping(load_yaml(doc)).get("_meta"))
            if meta.get("uuid"):
                content.append(str(meta["uuid"]))
        recipes = spec.get("recipes")
        for name in recipes if isinstance(recipes, list) else []:
            pending.append(_sub_recipe(current, str(name), approot))
    return _RecipePlan(config=tuple(sorted(config)), content=tuple(dict.fromkeys(content)))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _sub_recipe(parent: Path, name: str, approot: Path) -> Path:
    # Drupal resolves a bare name as a sibling and a name with "/" from the Drupal root;
    # "web" (DDEV's default docroot) is assumed, as only the report depends on it.
    if "/" not in name:
        return parent.parent / name
    return approot / "web" / name


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


# ---------------------------------------------------------------------------- files


def _check_gzip(path: Path) -> None:
    if not path.is_file():
        raise ApgError(
            "APG_DDEV_FAILED",
            f"drush sql:dump reported success but {path} is not on the host; is the project "
            "directory shared with the web container?",
        )
    with path.open("rb") as handle:
        if handle.read(2) != _GZIP_MAGIC:
            raise ApgError("APG_DDEV_FAILED", f"drush sql:dump wrote {path}, which is not gzip")


def _move_into_place(src: Path, dest: Path) -> None:
    """Rename ``src`` over ``dest``; across file systems, copy beside ``dest`` then rename."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with src.open("rb") as handle:
        os.fsync(handle.fileno())
    try:
        os.replace(src, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with atomic_target(dest) as tmp:
            shutil.copyfile(src, tmp)
        src.unlink()


# ---------------------------------------------------------------------------- commands


def _shell_inert(arg: str) -> None:
    """Refuse an argument that ``ddev exec``'s ``bash -c`` line could reinterpret."""
    if not arg or any(ch not in _SHELL_INERT for ch in arg):
        raise ApgError(
            "APG_DDEV_ARG_UNSAFE",
            f"argument {_abbreviate(arg)!r} holds characters that `ddev exec` would pass "
            "through bash; use paths and names made of letters, digits and _ @ % + = : , . / -",
            exit_code=2,
        )


def _render(args: Sequence[str]) -> str:
    return "ddev " + " ".join(_abbreviate(arg) for arg in args)


def _abbreviate(arg: str) -> str:
    return arg if len(arg) <= 80 else f"{arg[:40]}...({len(arg)} chars)"


def _failure_message(args: Sequence[str], result: subprocess.CompletedProcess[str]) -> str:
    stream = result.stderr if result.stderr.strip() else result.stdout
    lines = [line.rstrip() for line in stream.splitlines() if line.strip()]
    tail = " | ".join(lines[-_STDERR_TAIL_LINES:]) or "(no output)"
    message = f"`{_render(args)}` failed with exit {result.returncode}: {tail}"
    return message + _failure_hint(result.returncode, stream)


def _failure_hint(code: int, stream: str) -> str:
    if code == 127 or "command not found" in stream or "executable file not found" in stream:
        return " (is drush installed in the project? ddev composer require drush/drush)"
    if "ddev start" in stream or "not currently running" in stream:
        return " (start the project with: ddev start)"
    return ""


def _json_output(stdout: str, command: str) -> Any:
    try:
        return json.loads(stdout)
    except ValueError:
        raise _output_invalid(command, stdout) from None


def _last_json_line(stdout: str) -> Any:
    """The JSON on the last non-empty line: PHP notices may precede it on stdout."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    if not lines:
        return None
    try:
        return json.loads(lines[-1])
    except ValueError:
        return None


def _output_invalid(command: str, stdout: str) -> ApgError:
    return ApgError(
        "APG_DDEV_OUTPUT_INVALID",
        f"`{command}` printed no usable JSON; stdout began: {stdout[:200]!r}",
    )


def _probe_invalid(detail: str) -> ApgError:
    return ApgError("APG_DDEV_PROBE_INVALID", detail)


# ---------------------------------------------------------------------------- answers


class _ShapeError(Exception):
    """The probe's JSON does not have the shape the dataclasses need."""


def _obj(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, list) and not value:
        return {}  # PHP encodes an empty map as []
    if not isinstance(value, dict):
        raise _ShapeError(f"{where} should be an object, not {type(value).__name__}")
    return value


def _seq(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise _ShapeError(f"{where} should be a list, not {type(value).__name__}")
    return value


def _str(value: Any, where: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise _ShapeError(f"{where} should be a string, not {type(value).__name__}")


def _opt_str(value: Any, where: str) -> str | None:
    return None if value is None else _str(value, where)


def _int(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit():
        return int(value)
    raise _ShapeError(f"{where} should be an integer, not {value!r}")


def _opt_int(value: Any, where: str) -> int | None:
    return None if value is None else _int(value, where)


def _bool(value: Any, where: str) -> bool:
    if isinstance(value, bool):
        return value
    if value in (0, 1):
        return bool(value)
    raise _ShapeError(f"{where} should be true or false, not {value!r}")


def _parse_answer(data: dict[str, Any], query: StateQuery) -> StateAnswer:
    entities = {u: None for u in query.entities} | {
        u: _entity(r, f"entities[{u}]") if r is not None else None
        for u, r in _obj(data.get("entities", {}), "entities").items()
    }
    answer = StateAnswer(
        modules={
            name: _module(row, f"modules.{name}")
            for name, row in _obj(data.get("modules", {}), "modules").items()
        },
        config={
            # A config object is a mapping; PHP encodes an empty one as [].
            name: {} if value == [] else value
            for name, value in _obj(data.get("config", {}), "config").items()
        },
        config_names={
            prefix: [_str(n, f"config_names.{prefix}") for n in _seq(names, prefix)]
            for prefix, names in _obj(data.get("config_names", {}), "config_names").items()
        },
        entities=entities,
        counts=[_int(c, "counts[]") for c in _seq(data.get("counts", []), "counts")],
        views=[_view(v) for v in _seq(data.get("views", []), "views")],
        canvas=[_canvas(c) for c in _seq(data.get("canvas", []), "canvas")],
        pending_updates=[
            _pending_update(_obj(u, "pending_updates[]"))
            for u in _seq(data.get("pending_updates", []), "pending_updates")
        ],
        versions=_versions(data.get("versions")),
    )
    for name, asked in (("counts", query.counts), ("views", query.views), ("canvas", query.canvas)):
        got = len(getattr(answer, name))
        if got != len(asked):
            raise _ShapeError(f"{name} has {got} answers for {len(asked)} questions")
    return answer


def _module(value: Any, where: str) -> ModuleState:
    row = _obj(value, where)
    return ModuleState(
        name=_str(row.get("name"), f"{where}.name"),
        enabled=_bool(row.get("enabled"), f"{where}.enabled"),
        version=_opt_str(row.get("version"), f"{where}.version"),
        package=_opt_str(row.get("package"), f"{where}.package"),
        path=_opt_str(row.get("path"), f"{where}.path"),
        schema_installed=_opt_int(row.get("schema_installed"), f"{where}.schema_installed"),
        schema_code=_opt_int(row.get("schema_code"), f"{where}.schema_code"),
    )


def _entity(value: Any, where: str) -> EntityRecord:
    row = _obj(value, where)
    fields = {
        name: [_obj(item, f"{where}.fields.{name}[]") for item in _seq(items, name)]
        for name, items in _obj(row.get("fields", {}), f"{where}.fields").items()
    }
    return EntityRecord(
        entity_type=_str(row.get("entity_type"), f"{where}.entity_type"),
        uuid=_str(row.get("uuid"), f"{where}.uuid"),
        id=_int(row.get("id"), f"{where}.id"),
        bundle=_str(row.get("bundle"), f"{where}.bundle"),
        label=_str(row.get("label"), f"{where}.label"),
        status=_bool(row.get("status"), f"{where}.status"),
        fields=fields,
        created=_int(row.get("created", 0), f"{where}.created"),
        changed=_int(row.get("changed", 0), f"{where}.changed"),
    )


def _view(value: Any) -> ViewResult:
    row = _obj(value, "views[]")
    rows = tuple(
        ViewRow(
            id=_int(r.get("id"), "views[].rows[].id"),
            uuid=_str(r.get("uuid", ""), "views[].rows[].uuid"),
            label=_str(r.get("label", ""), "views[].rows[].label"),
        )
        for r in (_obj(item, "views[].rows[]") for item in _seq(row.get("rows", []), "rows"))
    )
    return ViewResult(
        view_id=_str(row.get("view_id"), "views[].view_id"),
        display_id=_str(row.get("display_id"), "views[].display_id"),
        rows=rows,
        total_rows=_int(row.get("total_rows", len(rows)), "views[].total_rows"),
        error=_opt_str(row.get("error"), "views[].error"),
    )


def _canvas(value: Any) -> CanvasTree | None:
    if value is None:
        return None
    row = _obj(value, "canvas[]")
    return CanvasTree(
        kind=_str(row.get("kind"), "canvas[].kind"),
        key=_str(row.get("key"), "canvas[].key"),
        label=_str(row.get("label", ""), "canvas[].label"),
        components=tuple(
            _component(_obj(c, "canvas[].components[]"))
            for c in _seq(row.get("components", []), "canvas[].components")
        ),
    )


def _component(row: dict[str, Any]) -> ComponentItem:
    where = "canvas[].components[]"
    return ComponentItem(
        uuid=_str(row.get("uuid"), f"{where}.uuid"),
        component_id=_str(row.get("component_id"), f"{where}.component_id"),
        parent_uuid=_opt_str(row.get("parent_uuid"), f"{where}.parent_uuid"),
        slot=_opt_str(row.get("slot"), f"{where}.slot"),
        inputs=dict(_obj(row.get("inputs", {}), f"{where}.inputs")),
    )


def _pending_update(row: dict[str, Any]) -> PendingUpdate:
    return PendingUpdate(
        module=_str(row.get("module"), "update.module"),
        update_id=_str(row.get("update_id"), "update.update_id"),
        description=_str(row.get("description", ""), "update.description").strip(),
    )


def _versions(value: Any) -> Versions | None:
    if value is None:
        return None
    row = _obj(value, "versions")
    return Versions(
        core=_str(row.get("core"), "versions.core"),
        runtime={
            k: _str(v, f"versions.runtime.{k}")
            for k, v in _obj(row.get("runtime", {}), "versions.runtime").items()
        },
        modules={
            name: {
                k: _opt_str(v, f"versions.modules.{name}.{k}")
                for k, v in _obj(info, f"versions.modules.{name}").items()
            }
            for name, info in _obj(row.get("modules", {}), "versions.modules").items()
        },
        schema={
            name: _opt_int(v, f"versions.schema.{name}")
            for name, v in _obj(row.get("schema", {}), "versions.schema").items()
        },
    )


def _parse_documents(value: Any) -> list[dict[str, Any]]:
    documents = []
    for item in _seq(value, "content_export"):
        document = _obj(item, "content_export[]")
        meta = _obj(document.get("_meta"), "content_export[]._meta")
        _str(meta.get("entity_type"), "content_export[]._meta.entity_type")
        _str(meta.get("uuid"), "content_export[]._meta.uuid")
        document["default"] = _obj(document.get("default", {}), "content_export[].default")
        documents.append(document)
    return documents
