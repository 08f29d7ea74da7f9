"""Settings: every ``AI_PG_*`` value, read once at the edge and passed down.

The edge builds one `Settings` with `Settings.from_environ()`: each ``cli/`` command (which is
what the nox sessions and the DDEV wrappers run), the demo and the Inspect integration. The
library reads its fields and never the environment, the way nox hands its ``global_config`` to
every session; the only environment it touches is one it builds for a child process. A
harness driving several beds in one process builds one value per bed (`dataclasses.replace`),
so two campaigns with different baseline directories and fixture paths never see each other's.
`DEFAULT_SETTINGS` is every variable unset.

Which bed a command acts on (``--approot``, else ``AI_PG_APPROOT``, else the current directory)
is resolved by `resolve_approot`, which names where a missing directory came from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ai_proving_ground.errors import ApgError

# How long provision, reset and escrow wait for the bed lock when AI_PG_LOCK_TIMEOUT is unset.
DEFAULT_LOCK_WAIT_SECONDS = 30.0
# How much of each adapter output stream apg run keeps when AI_PG_LOG_LIMIT is unset: a real
# agent CLI's whole stream-json transcript is a few MB; past this, only the truncation line.
DEFAULT_LOG_LIMIT_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Settings:
    """The values of the ``AI_PG_*`` variables, as the library uses them (empty means unset)."""

    approot: str | None = None  # AI_PG_APPROOT (--approot wins)
    baseline_dir: str | None = None  # AI_PG_BASELINE_DIR; relative means app-relative
    baseline_ref: str | None = None  # AI_PG_BASELINE_REF: the tag name instead of apg-baseline-*
    fixture_path: tuple[str, ...] = ()  # AI_PG_FIXTURE_PATH entries (relative: to the app root)
    fixtures: tuple[str, ...] = ()  # AI_PG_FIXTURES; empty means the shipped default set
    site_driver: str | None = None  # AI_PG_SITE_DRIVER
    dataset: str | None = None  # AI_PG_DATASET (--dataset wins)
    agent: str | None = None  # AI_PG_AGENT (--agent wins)
    organization: str | None = None  # AI_PG_ORGANIZATION, in the envelope's source metadata
    escrow_dir: str | None = None  # AI_PG_ESCROW_DIR
    lock_timeout: str | None = None  # AI_PG_LOCK_TIMEOUT, checked when a lock is taken
    no_import: bool = False  # AI_PG_NO_IMPORT=1: grade does not store its envelope
    allow_untracked: bool = False  # AI_PG_ALLOW_UNTRACKED=1
    allow_stale_baseline: bool = False  # AI_PG_ALLOW_STALE_BASELINE=1
    allow_host_creds: bool = False  # AI_PG_ALLOW_HOST_CREDS=1
    allow_unconfined: bool = False  # AI_PG_ALLOW_UNCONFINED=1: adapters may run unsandboxed
    sandbox: str | None = None  # AI_PG_SANDBOX: auto (default), bwrap, landlock or none
    sandbox_reads: tuple[str, ...] = ()  # AI_PG_SANDBOX_READS: more read-only paths (":")
    sandbox_hide: tuple[str, ...] = ()  # AI_PG_SANDBOX_HIDE: more paths an adapter never sees
    site_allow: tuple[str, ...] = ()  # AI_PG_SITE_ALLOW: drush commands/options the broker adds
    log_limit: str | None = None  # AI_PG_LOG_LIMIT: bytes kept of each adapter output stream
    no_color: bool = False  # NO_COLOR set and not empty (no-color.org): plain progress lines
    judge_model: str | None = None  # AI_PG_JUDGE_MODEL: the model judge behaviours ask
    judge_base_url: str | None = None  # AI_PG_JUDGE_BASE_URL: an Anthropic-compatible endpoint
    judge_api_key: str | None = field(default=None, repr=False)  # AI_PG_JUDGE_API_KEY
    # $XDG_DATA_HOME (when absolute, as the XDG spec asks), else $HOME/.local/share; None: neither.
    data_home: str | None = None

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings ``environ`` (default: this process's environment) holds."""
        env = os.environ if environ is None else environ

        def text(name: str) -> str | None:
            return env.get(name) or None

        def flag(name: str) -> bool:
            return env.get(name) == "1"

        def paths(name: str) -> tuple[str, ...]:  # a ":"-separated list, empty entries dropped
            return tuple(e for e in env.get(name, "").split(":") if e)

        return cls(
            approot=text("AI_PG_APPROOT"),
            baseline_dir=text("AI_PG_BASELINE_DIR"),
            baseline_ref=text("AI_PG_BASELINE_REF"),
            fixture_path=paths("AI_PG_FIXTURE_PATH"),
            fixtures=tuple(env.get("AI_PG_FIXTURES", "").replace(",", " ").split()),
            site_driver=text("AI_PG_SITE_DRIVER"),
            dataset=text("AI_PG_DATASET"),
            agent=text("AI_PG_AGENT"),
            organization=text("AI_PG_ORGANIZATION"),
            escrow_dir=text("AI_PG_ESCROW_DIR"),
            lock_timeout=text("AI_PG_LOCK_TIMEOUT"),
            no_import=flag("AI_PG_NO_IMPORT"),
            allow_untracked=flag("AI_PG_ALLOW_UNTRACKED"),
            allow_stale_baseline=flag("AI_PG_ALLOW_STALE_BASELINE"),
            allow_host_creds=flag("AI_PG_ALLOW_HOST_CREDS"),
            allow_unconfined=flag("AI_PG_ALLOW_UNCONFINED"),
            sandbox=text("AI_PG_SANDBOX"),
            sandbox_reads=paths("AI_PG_SANDBOX_READS"),
            sandbox_hide=paths("AI_PG_SANDBOX_HIDE"),
            site_allow=tuple(env.get("AI_PG_SITE_ALLOW", "").replace(",", " ").split()),
            log_limit=text("AI_PG_LOG_LIMIT"),
            no_color=bool(env.get("NO_COLOR")),
            judge_model=text("AI_PG_JUDGE_MODEL"),
            judge_base_url=text("AI_PG_JUDGE_BASE_URL"),
            judge_api_key=text("AI_PG_JUDGE_API_KEY") or text("ANTHROPIC_API_KEY"),
            data_home=_data_home(env),
        )

    @property
    def lock_wait_seconds(self) -> float:
        """AI_PG_LOCK_TIMEOUT as seconds (default 30); not a number is a usage error."""
        if not self.lock_timeout:
            return DEFAULT_LOCK_WAIT_SECONDS
        try:
            return max(0.0, float(self.lock_timeout))
        except ValueError:
            raise ApgError("APG_USAGE", f"AI_PG_LOCK_TIMEOUT={self.lock_timeout!r} is not a "
                           "number of seconds", exit_code=2) from None

    @property
    def log_limit_bytes(self) -> int:
        """AI_PG_LOG_LIMIT as a byte count (default 16 MiB); not a whole number of bytes above
        0 is a usage error."""
        if not self.log_limit:
            return DEFAULT_LOG_LIMIT_BYTES
        try:
            limit = int(self.log_limit)
        except ValueError:
            limit = 0
        if limit <= 0:
            raise ApgError("APG_USAGE", f"AI_PG_LOG_LIMIT={self.log_limit!r} is not a whole "
                           "number of bytes above 0", exit_code=2)
        return limit


DEFAULT_SETTINGS = Settings()


def _data_home(env: Mapping[str, str]) -> str | None:
    xdg = env.get("XDG_DATA_HOME", "")
    if xdg and os.path.isabs(xdg):  # a relative value is to be ignored (XDG Base Directory)
        return xdg
    home = env.get("HOME", "")
    return os.path.join(home, ".local", "share") if home else None


def resolve_approot(argument: str | None, settings: Settings, must_exist: bool = True) -> Path:
    """The app root as an absolute path; a missing directory names where it came from."""
    if argument:
        raw, source = argument, "--approot"
    elif settings.approot:
        raw, source = settings.approot, "AI_PG_APPROOT"
    else:
        raw, source = os.getcwd(), "the current directory"
    path = Path(raw).expanduser().absolute()
    if must_exist and not path.is_dir():
        raise ApgError("APG_APPROOT_MISSING", f"app root {path} (from {source}) is not a "
                       "directory; pass --approot DIR or set AI_PG_APPROOT", exit_code=2)
    return path
