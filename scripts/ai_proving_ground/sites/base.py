"""The site driver interface: the only seam through which the product touches a live site.

Reads go through :meth:`SiteDriver.read_state`, which answers a whole :class:`StateQuery`
in one round trip. On DDEV a round trip is a ``ddev exec`` (about a second), so callers
build one batch for everything they need instead of asking question by question.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BED_RECORD, ddev_records_dir, is_ddev_project, read_driver
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.sites.menus import MenuTree

# ---------------------------------------------------------------------------- answers


@dataclass(frozen=True)
class ModuleState:
    """One extension as the site sees it."""

    name: str
    enabled: bool
    version: str | None
    package: str | None = None
    path: str | None = None
    schema_installed: int | None = None
    schema_code: int | None = None


@dataclass(frozen=True)
class EntityRecord:
    """A content entity, keyed by UUID; ``id`` is a serial assigned at import."""

    entity_type: str
    uuid: str
    id: int
    bundle: str
    label: str
    status: bool
    fields: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    created: int = 0
    changed: int = 0


@dataclass(frozen=True)
class ViewRow:
    """One row of an executed view."""

    id: int
    uuid: str
    label: str


@dataclass(frozen=True)
class ViewResult:
    """The ordered rows of one executed view display, or why it could not execute."""

    view_id: str
    display_id: str
    rows: tuple[ViewRow, ...] = ()
    total_rows: int = 0
    error: str | None = None
    # What a visitor of the display gets: "rows", "exception", "render error (HTTP 500)",
    # "not served (404)", "not served (disabled: page path 404)", "no such view or display".
    outcome: str = "rows"
    # ViewExecutable::validate() messages ("display_id: message"); execution still ran.
    messages: tuple[str, ...] = ()
    # Handlers Views replaced with its Broken plugin ("filter.id", "sort.id", "field.id").
    broken: tuple[str, ...] = ()
    # Runs of rows (start, end) whose sort keys are equal: their order is the database's.
    ties: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class ComponentItem:
    """One node of a Canvas component tree."""

    uuid: str
    component_id: str
    parent_uuid: str | None = None
    slot: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CanvasTree:
    """A component tree held by a Canvas page entity or a page-region config object."""

    kind: str  # "page" or "region"
    key: str  # page UUID or region config name
    label: str
    components: tuple[ComponentItem, ...] = ()
    # A region's config status (a disabled region renders nothing); a page's published state.
    status: bool = True


@dataclass(frozen=True)
class PageResult:
    """What an anonymous visitor of a path gets: which routes claim it and what is served."""

    path: str  # as asked, normalized to a leading slash and no trailing one
    # Every route at the path, in the order the router tries them: "view:ID/DISPLAY" (an
    # enabled page display of an enabled view) or "<entity_type>:<uuid>" (an alias's target).
    claims: tuple[str, ...] = ()
    served: str | None = None  # the claim a visitor gets; None when nothing claims the path
    # As ViewResult words it for a view; "entity" for a viewable entity; "not served (403)"
    # for an unpublished one; "not served (404)" when nothing claims the path.
    outcome: str = "not served (404)"
    rows: tuple[ViewRow, ...] = ()  # the served view display's rows
    error: str | None = None


@dataclass(frozen=True)
class PendingUpdate:
    """A database update the code has and the database has not run."""

    module: str
    update_id: str
    description: str


@dataclass(frozen=True)
class Versions:
    """Code identity: core, runtime and per-module versions (schema versions kept apart)."""

    core: str
    runtime: dict[str, str]
    modules: dict[str, dict[str, str | None]]
    schema: dict[str, int | None]


# ---------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Condition:
    """A field condition: ``field`` is a base field (status, label, bundle) or a field name."""

    field: str
    operator: str
    value: Any = None


@dataclass(frozen=True)
class CountQuery:
    """How many entities of a type (and bundle) match every condition."""

    entity_type: str
    bundle: str | None = None
    conditions: tuple[Condition, ...] = ()


@dataclass(frozen=True)
class ViewQuery:
    """Execute one display of a view."""

    view_id: str
    display_id: str = "default"
    arguments: tuple[str, ...] = ()  # contextual filter values, as in /path/arg1/arg2
    # Exposed form input, (name, value) pairs as in ?product=api: what a visitor typed.
    exposed: tuple[tuple[str, str], ...] = ()
    page: int = 0  # the pager's page, as in ?page=1 (0 is the first)


@dataclass(frozen=True)
class PageQuery:
    """What a visitor of ``path`` (such as ``/kb/billing``) gets."""

    path: str


@dataclass(frozen=True)
class CanvasRef:
    """A Canvas tree to read: ``page`` by entity UUID or ``region`` by config name."""

    kind: str
    key: str


@dataclass(frozen=True)
class ContentSelector:
    """Which content an export captures: a type, optionally a bundle and fixed UUIDs."""

    entity_type: str
    bundle: str | None = None
    uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class StateQuery:
    """Everything one caller wants to know, answered in a single round trip."""

    modules: bool = False
    config: tuple[str, ...] = ()
    config_prefixes: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    counts: tuple[CountQuery, ...] = ()
    views: tuple[ViewQuery, ...] = ()
    canvas: tuple[CanvasRef, ...] = ()
    pages: tuple[PageQuery, ...] = ()
    menus: tuple[str, ...] = ()  # menu ids (system.menu.ID)
    pending_updates: bool = False
    versions: bool = False


@dataclass
class StateAnswer:
    """The answers to a :class:`StateQuery`, in the same shapes for every driver."""

    modules: dict[str, ModuleState] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    config_names: dict[str, list[str]] = field(default_factory=dict)
    entities: dict[str, EntityRecord | None] = field(default_factory=dict)
    counts: list[int] = field(default_factory=list)
    views: list[ViewResult] = field(default_factory=list)
    canvas: list[CanvasTree | None] = field(default_factory=list)
    pages: list[PageResult] = field(default_factory=list)
    menus: dict[str, MenuTree | None] = field(default_factory=dict)  # None: no such menu
    pending_updates: list[PendingUpdate] = field(default_factory=list)
    versions: Versions | None = None


@dataclass(frozen=True)
class RecipeReport:
    """What applying a recipe did."""

    recipe: str
    modules_installed: tuple[str, ...] = ()
    config_written: tuple[str, ...] = ()
    content_created: tuple[str, ...] = ()
    content_skipped: tuple[str, ...] = ()


# ---------------------------------------------------------------------------- driver


class SiteDriver(ABC):
    """A live site. Implementations count their round trips in :attr:`round_trips`."""

    name: ClassVar[str]

    def __init__(self, approot: Path) -> None:
        self.approot = approot
        self.round_trips = 0

    @abstractmethod
    def read_state(self, query: StateQuery) -> StateAnswer:
        """Answer every question in ``query`` in one round trip."""

    @abstractmethod
    def apply_recipe(self, recipe_dir: Path) -> RecipeReport:
        """Apply a recipe; on failure, config is as it was before."""

    @abstractmethod
    def install_modules(self, names: Sequence[str]) -> list[str]:
        """Install modules and their dependencies; return what was newly installed."""

    @abstractmethod
    def uninstall_modules(self, names: Sequence[str]) -> list[str]:
        """Uninstall modules; refuse when an installed module depends on one of them."""

    @abstractmethod
    def dump_database(self, dest: Path) -> None:
        """Write a consistent database dump to ``dest`` (new-then-rename)."""

    @abstractmethod
    def restore_database(self, src: Path) -> None:
        """Replace the database with the dump at ``src``."""

    @abstractmethod
    def keep_database(self, dest: Path, level: int) -> None:
        """A gzip dump (``level``, if ours) at ``dest``, renamed in place, not synced: evidence."""

    @abstractmethod
    def rebuild_caches(self) -> None:
        """Drop every derived cache (``drush cr``)."""

    @abstractmethod
    def public_files_dir(self) -> Path:
        """The public files directory (``public://``) as a host path."""

    @abstractmethod
    def private_files_dir(self) -> Path | None:
        """The private files directory, when one is configured."""

    @abstractmethod
    def run_updates(self) -> list[PendingUpdate]:
        """Run pending database updates (``drush updb``); return what ran."""

    @abstractmethod
    def export_config(self, names: Sequence[str]) -> dict[str, Any]:
        """Active config objects by exact name, ready to write as ``config/<name>.yml``."""

    @abstractmethod
    def all_config(self) -> dict[str, Any]:
        """Every active config object, name -> value (a campaign keeps them as evidence)."""

    @abstractmethod
    def export_content(self, selectors: Sequence[ContentSelector]) -> list[dict[str, Any]]:
        """Matching entities as core default-content documents (``_meta`` + ``default``)."""

    @abstractmethod
    def status(self) -> dict[str, Any]:
        """``drush core:status``-shaped facts about the site."""

    def host_files_changed(self) -> None:
        """Files in the bed were written on the host; make the site see them (DDEV: Mutagen).

        Nothing to do where the site reads the host's files directly, as the embedded site does.
        """
        return None

    # Conveniences built on read_state; each is one round trip.

    def modules(self) -> dict[str, ModuleState]:
        """All modules known on disk, enabled or not."""
        return self.read_state(StateQuery(modules=True)).modules

    def config_get(self, name: str) -> Any:
        """One config object, or ``None`` when it does not exist."""
        return self.read_state(StateQuery(config=(name,))).config.get(name)

    def entities(self, uuids: Sequence[str]) -> dict[str, EntityRecord | None]:
        """Entities by UUID, ``None`` for each UUID that does not resolve."""
        return self.read_state(StateQuery(entities=tuple(uuids))).entities


# ---------------------------------------------------------------------------- registry

# Driver name -> (module, class). A driver is imported only when it is looked up, so this module
# imports none of its implementations (they import it) and `apg --help` stays fast.
DRIVERS: dict[str, tuple[str, str]] = {
    "sqlite": ("ai_proving_ground.sites.embedded.driver", "EmbeddedSite"),
    "ddev": ("ai_proving_ground.sites.ddev.driver", "DdevSite"),
}
D = TypeVar("D", bound=type[SiteDriver])


def register_driver(name: str) -> Callable[[D], D]:
    """Class decorator: the driver's name, which must be a key of ``DRIVERS``."""
    if name not in DRIVERS:
        raise ValueError(f"driver {name!r} is not listed in sites.base.DRIVERS")

    def decorate(cls: D) -> D:
        cls.name = name
        return cls

    return decorate


def driver_names() -> list[str]:
    """Registered driver names."""
    return sorted(DRIVERS)


def get_driver(name: str, approot: Path) -> SiteDriver:
    """Instantiate the driver called ``name`` for the bed at ``approot``."""
    try:
        module, class_name = DRIVERS[name]
    except KeyError:
        known = ", ".join(sorted(DRIVERS))
        raise ApgError(
            "APG_DRIVER_UNKNOWN",
            f"no site driver called {name!r}; set AI_PG_SITE_DRIVER to one of: {known}",
            exit_code=2,
        ) from None
    cls: type[SiteDriver] = getattr(importlib.import_module(module), class_name)
    return cls(approot)


def driver_name_for(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> str:
    """AI_PG_SITE_DRIVER wins; then the driver recorded when the bed was made or provisioned (a
    DDEV bed's record, outside the project where no attempt can write it, is read first; an
    embedded bed's is in the bed, so a ``.ddev/config.yaml`` planted there changes nothing);
    a bed with no record is a DDEV project when it has a ``.ddev/config.yaml``, else embedded."""
    if settings.site_driver:
        return settings.site_driver
    if read_driver(ddev_record(approot)) == "ddev":
        return "ddev"
    return "ddev" if is_ddev_project(approot) else "sqlite"


def ddev_record(approot: Path) -> Path:
    """Where a DDEV bed's ``bed.json`` lives: its default records folder, outside the project."""
    return ddev_records_dir(approot) / BED_RECORD


def driver_for(approot: Path, settings: Settings = DEFAULT_SETTINGS) -> SiteDriver:
    """The driver ``settings`` choose for the bed at ``approot``."""
    return get_driver(driver_name_for(approot, settings), approot)
