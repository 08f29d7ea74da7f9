"""``apg site`` config commands: config:get/set/delete/list/import/export, and field:create,
node-type:create, vocabulary:create, menu:create and role:create (config made as the entity API
makes it)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ai_proving_ground.cli.common import emit
from ai_proving_ground.cli.site_commands import YES, arg, command, get_path, note, parse_value
from ai_proving_ground.errors import ApgError, UsageError
from ai_proving_ground.report import stderr
from ai_proving_ground.sites.base import StateQuery
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

if TYPE_CHECKING:  # the entity API modules load lazily, for start-up time
    from ai_proving_ground.sites.embedded.field_api import Save
    from ai_proving_ground.sites.embedded.store import Store


@command("config:get", "print a config object or one key of it", arg("name"), arg("key", nargs="?"),
         aliases=["cget"], fmt="yaml")
def _config_get(site: EmbeddedSite, args: argparse.Namespace) -> int:
    data = site.config_get(args.name)
    if data is None:
        raise ApgError("APG_CONFIG_MISSING", f"config {args.name} does not exist")
    if args.key:
        value = get_path(data, args.key, args.name)
        data = {f"{args.name}:{args.key}": value}
    emit(data, args.format, args.fields)
    return 0


@command("config:set", "set a key (dotted path) of a config object; key ? sets the whole object",
         arg("name"), arg("key"), arg("value"),
         arg("--input-format", default="string", choices=["string", "yaml", "json"]), YES,
         aliases=["cset"])
def _config_set(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: the recipe reader that owns set_path is slow to import.
    from ai_proving_ground.sites.embedded.recipes import set_path

    value = parse_value(args.value, args.input_format)
    with site.session() as store:
        current = store.config_get(args.name)
        if args.key == "?":
            if not isinstance(value, dict):
                raise UsageError("with key ?, the value must be a mapping (use --input-format=yaml)")
            data = value
        else:
            data = current if current is not None else {}
            set_path(data, args.key, value)
        warnings = site.config_save(store, args.name, data, raw=True)
    for warning in warnings:
        print(f"APG_CONFIG_UNUSABLE {warning}", file=stderr())
    note(f"Saved {args.name}.")
    return 0


@command("config:delete", "delete a config object, or one key of it", arg("name"),
         arg("key", nargs="?"), aliases=["cdel"])
def _config_delete(site: EmbeddedSite, args: argparse.Namespace) -> int:
    with site.session() as store:
        if args.key is None:
            site.config_delete(store, args.name)
        else:
            data = store.config_get(args.name)
            if data is None:
                raise ApgError("APG_CONFIG_MISSING", f"config {args.name} does not exist")
            parent_key, _, last = args.key.rpartition(".")
            parent = get_path(data, parent_key, args.name) if parent_key else data
            if not isinstance(parent, dict) or last not in parent:
                raise ApgError("APG_CONFIG_MISSING", f"config {args.name} has no key {args.key}")
            del parent[last]
            site.config_save(store, args.name, data)
    note(f"Deleted {args.name}{':' + args.key if args.key else ''}.")
    return 0


@command("config:list", "config names, optionally under a prefix", arg("prefix", nargs="?", default=""),
         aliases=["cls"], fmt="string")
def _config_list(site: EmbeddedSite, args: argparse.Namespace) -> int:
    names = site.read_state(StateQuery(config_prefixes=(args.prefix,))).config_names[args.prefix]
    emit(names, args.format, args.fields)
    return 0


@command("config:import", "make active config equal the sync directory",
         arg("--source", help="directory (default: config/sync)"), YES, aliases=["cim"])
def _config_import(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: only the sync-directory commands need config_sync.
    from ai_proving_ground.sites.embedded import config_sync

    source, root = config_sync.chosen(args.source, site.layout.config_sync, site.approot)
    changes = site.config_import(config_sync.read_directory(source, root))
    counts = ", ".join(f"{len(v)} {k}" for k, v in changes.items())
    note(f"Config imported from {source}: {counts}.")
    return 0


@command("config:export", "write active config to the sync directory",
         arg("--destination", help="directory (default: config/sync)"), YES, aliases=["cex"])
def _config_export(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: only the sync-directory commands need config_sync.
    from ai_proving_ground.sites.embedded import config_sync

    destination, root = config_sync.chosen(args.destination, site.layout.config_sync, site.approot)
    changes = config_sync.write_directory(destination, site.all_config(), root)
    note(f"Config exported to {destination}: {len(changes['written'])} written, "
          f"{len(changes['removed'])} removed.")
    return 0


@command("field:create", "create a field as Field UI does (drush field:create)",
         arg("entity_type"), arg("bundle"), arg("--field-name", required=True),
         arg("--field-type", required=True), arg("--field-label"), arg("--field-description", default=""),
         arg("--cardinality", type=int, default=1), arg("--is-required", action="store_true"),
         arg("--storage-settings", default="{}"), arg("--field-settings", default="{}"), YES)
def _field_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time: the builder imports uuid, which every other command can skip.
    from ai_proving_ground.sites.embedded.field_api import FieldRequest, create_field

    request = FieldRequest(args.entity_type, args.bundle, args.field_name, args.field_type,
                           args.field_label or args.field_name, args.cardinality, args.is_required,
                           description=args.field_description,
                           storage_settings=parse_value(args.storage_settings, "yaml"),
                           field_settings=parse_value(args.field_settings, "yaml"))
    return _save(site, lambda store: create_field(store, request, site.config_save))


@command("node-type:create", "create a content type as the Add content type form does "
         "(NodeType::create, then a body field unless --no-body)", arg("type"),
         arg("--name", required=True), arg("--description"),
         arg("--no-body", action="store_true", help="make no body field"), YES)
def _node_type_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time, as field:create.
    from ai_proving_ground.sites.embedded.bundle_api import create_node_type

    return _save_made(site, partial(create_node_type, body=not args.no_body),
                      {"type": args.type, "name": args.name}, args.description)


@command("vocabulary:create", "create a vocabulary as its Add form does (Vocabulary::create)",
         arg("vid"), arg("--name", required=True), arg("--description"), YES)
def _vocabulary_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time, as field:create.
    from ai_proving_ground.sites.embedded.bundle_api import create_vocabulary

    return _save_made(site, create_vocabulary, {"vid": args.vid, "name": args.name},
                      args.description)


@command("menu:create", "create a menu as its Add form does (Menu::create)", arg("id"),
         arg("--label", required=True), arg("--description"), YES)
def _menu_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time, as field:create.
    from ai_proving_ground.sites.embedded.bundle_api import create_menu

    return _save_made(site, create_menu, {"id": args.id, "label": args.label}, args.description)


def _save_made(site: EmbeddedSite, make: Callable[[Store, dict[str, Any], Save], list[str]],
               values: dict[str, Any], description: str | None) -> int:
    """Save the config entity ``make`` makes of ``values`` (and a description, when given)."""
    if description is not None:
        values["description"] = description
    return _save(site, lambda store: make(store, values, site.config_save))


def _save(site: EmbeddedSite, make: Callable[[Store], list[str]]) -> int:
    """Run ``make`` in one site session and say which config objects it saved."""
    with site.session() as store:
        saved = make(store)
    note(f"Saved {', '.join(saved)}.")
    return 0


@command("role:create", "create a role as drush role:create does (Role::create, which also "
         "makes the actions that add and remove it)", arg("machine_name"),
         arg("label", nargs="?", help="human-readable name (default: the machine name)"), YES,
         aliases=["rcrt"])
def _role_create(site: EmbeddedSite, args: argparse.Namespace) -> int:
    # Lazy for start-up time, as field:create.
    from ai_proving_ground.sites.embedded.role_api import create_role

    label = args.label or args.machine_name
    return _save(site, lambda store: create_role(store, args.machine_name, label, site.config_save))
