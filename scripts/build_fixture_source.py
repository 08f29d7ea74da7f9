#!/usr/bin/env python3
"""Build the source site from which the shipped fixtures are exported.

    python3 scripts/build_fixture_source.py DIR
    apg fixture-export kb_docs --approot DIR
    apg fixture-export canvas_home --approot DIR
    apg fixture-export kb_notices --approot DIR
    apg fixture-export kb_menus --approot DIR

DIR must be absent or empty. The script runs ``apg bed init DIR`` and then defines, through the
site driver, everything ``fixtures/fixture_kb_docs`` and ``fixtures/fixture_canvas_home`` hold:
the kb_doc content type and its four fields, 23 knowledge-base articles (two unpublished), a
kb_faq type sharing the section and weight fields with one item, the Canvas front page and its
two page regions. Every UUID is fixed, so exporting again gives the same bytes; change
the data here, rebuild, re-export, and bump the fixture's version in its fragment.

The source site also holds things the fixtures must *not* capture (a ``page`` content type and
one page), so that an export proves its selectors select.

Exit codes: 0 built (the directory is printed on stdout); 1 refused or failed (a token on
stderr); 2 bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

# Runnable from a checkout without installing: the package sits beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ai_proving_ground.bed import init_bed
from ai_proving_ground.cli.common import ArgumentParser, run
from ai_proving_ground.sites.embedded.driver import EmbeddedSite

# ---------------------------------------------------------------------------- kb_docs

KB_NAMESPACE = "6b0d0c00-"
KB_SECTIONS = (
    ("getting_started", "Getting started"),
    ("accounts", "Accounts"),
    ("billing", "Billing"),
    ("troubleshooting", "Troubleshooting"),
)


def _config_uuid(n: int) -> str:
    # Drupal gives every config entity a uuid; export strips it, as config export for recipes does.
    return f"f1c0f1c0-0000-4000-8000-{n:012d}"


def _field_storage(n: int, name: str, field_type: str, module: str, settings: dict[str, Any],
                   cardinality: int = 1) -> dict[str, Any]:
    modules = sorted({"node", module} - {"core"})
    return {
        "uuid": _config_uuid(n), "langcode": "en", "status": True,
        "dependencies": {"module": modules},
        "id": f"node.{name}", "field_name": name, "entity_type": "node", "type": field_type,
        "settings": settings, "module": module, "locked": False, "cardinality": cardinality,
        "translatable": True, "indexes": [], "persist_with_no_fields": False,
        "custom_storage": False,
    }


def _field_instance(n: int, name: str, field_type: str, label: str, description: str,
                    required: bool, module: str | None = None,
                    settings: dict[str, Any] | None = None,
                    bundle: str = "kb_doc") -> dict[str, Any]:
    dependencies: dict[str, list[str]] = {
        "config": [f"field.storage.node.{name}", f"node.type.{bundle}"]}
    if module:
        dependencies["module"] = [module]
    return {
        "uuid": _config_uuid(n), "langcode": "en", "status": True, "dependencies": dependencies,
        "id": f"node.{bundle}.{name}", "field_name": name, "entity_type": "node",
        "bundle": bundle, "label": label, "description": description, "required": required,
        "translatable": False, "default_value": [], "default_value_callback": "",
        "settings": settings or {}, "field_type": field_type,
    }


# The config as Drupal 10.3 stores it (tests/embedded/golden/config/), in the shape the probe
# reads it back: PHP's empty arrays are [], an integer field gets its settings defaults.
INTEGER_FIELD_SETTINGS = {"min": "", "max": "", "prefix": "", "suffix": ""}

KB_CONFIG: dict[str, dict[str, Any]] = {
    "node.type.kb_doc": {
        "uuid": _config_uuid(1), "langcode": "en", "status": True, "dependencies": [],
        "name": "Knowledge base article", "type": "kb_doc",
        "description": "A help-center article, filed under one section and ordered within it "
                       "by weight.",
        "help": None, "new_revision": True, "preview_mode": 1, "display_submitted": False,
    },
    "field.storage.node.field_kb_section": _field_storage(
        2, "field_kb_section", "list_string", "options",
        {"allowed_values": [{"value": v, "label": label} for v, label in KB_SECTIONS],
         "allowed_values_function": ""}),
    "field.storage.node.field_kb_summary": _field_storage(
        3, "field_kb_summary", "string_long", "core", {"case_sensitive": False}),
    "field.storage.node.field_kb_weight": _field_storage(
        4, "field_kb_weight", "integer", "core", {"unsigned": False, "size": "normal"}),
    "field.storage.node.field_kb_tags": _field_storage(
        5, "field_kb_tags", "string", "core",
        {"max_length": 255, "case_sensitive": False, "is_ascii": False}, cardinality=-1),
    "field.field.node.kb_doc.field_kb_section": _field_instance(
        6, "field_kb_section", "list_string", "Section",
        "Which part of the help center the article belongs to.", True, "options"),
    "field.field.node.kb_doc.field_kb_summary": _field_instance(
        7, "field_kb_summary", "string_long", "Summary",
        "One or two sentences shown in article lists.", False),
    "field.field.node.kb_doc.field_kb_weight": _field_instance(
        8, "field_kb_weight", "integer", "Weight",
        "Order within the section: lighter articles are listed first.", True,
        settings=INTEGER_FIELD_SETTINGS),
    "field.field.node.kb_doc.field_kb_tags": _field_instance(
        9, "field_kb_tags", "string", "Tags", "Free-form keywords for search.", False),
    # A second bundle sharing the section and weight fields: a listing of one section's
    # articles that forgets the content-type filter lists its items too.
    "node.type.kb_faq": {
        "uuid": _config_uuid(10), "langcode": "en", "status": True, "dependencies": [],
        "name": "Knowledge base FAQ", "type": "kb_faq",
        "description": "A short question and answer, filed under a section like an article.",
        "help": None, "new_revision": True, "preview_mode": 1, "display_submitted": False,
    },
    "field.field.node.kb_faq.field_kb_section": _field_instance(
        11, "field_kb_section", "list_string", "Section",
        "Which part of the help center the question belongs to.", True, "options",
        bundle="kb_faq"),
    "field.field.node.kb_faq.field_kb_weight": _field_instance(
        12, "field_kb_weight", "integer", "Weight", "Order within the section.", True,
        settings=INTEGER_FIELD_SETTINGS, bundle="kb_faq"),
}

# (section, title, weight, summary, tags, published), in UUID (and node id) order. Sections are
# interleaved, and within every section the weight order, the title order, the creation order
# (KB_CREATED) and the id order differ, so a task that sorts by the wrong key, or not at all,
# gets a visibly wrong list. Billing holds 12 published articles, more than a default 10-item
# pager shows, and two unpublished ones (weights 0 and 13: first and last if a listing forgets
# the published filter).
KB_ARTICLES: tuple[tuple[str, str, int, str, tuple[str, ...], bool], ...] = (
    ("getting_started", "Invite your team", 3,
     "Send invitations, choose each person's role and resend an invitation that expired.",
     ("team", "invitations"), True),
    ("accounts", "Reset your password", 2,
     "Get a reset link by email when you cannot sign in, and choose a new password.",
     ("password", "sign-in"), True),
    ("billing", "Understand your invoice", 3,
     "What each line of your monthly invoice means and where taxes are shown.",
     ("invoices",), True),
    ("troubleshooting", "Contact support", 3,
     "When to open a ticket, what to include and how fast to expect an answer.",
     ("support", "tickets"), True),
    ("getting_started", "Tour the dashboard", 1,
     "A five-minute walk through the dashboard: projects, activity and settings.",
     ("dashboard",), True),
    ("accounts", "Change your email address", 3,
     "Move your account to a new email address and confirm the change.",
     ("email", "profile"), True),
    ("billing", "Update your payment method", 1,
     "Replace an expired card or switch to invoicing before your next renewal.",
     ("payments", "cards", "renewal"), True),
    ("troubleshooting", "Fix sync errors", 1,
     "The common causes of sync failures and how to retry a failed sync safely.",
     ("sync", "errors"), True),
    ("getting_started", "Create your first project", 2,
     "Start a project from a template, name it and invite your first collaborator.",
     ("projects", "templates"), True),
    ("accounts", "Enable two-factor authentication", 1,
     "Protect your account with an authenticator app and keep your recovery codes safe.",
     ("security", "2fa", "sign-in"), True),
    ("billing", "Request a refund", 2,
     "Which charges can be refunded, and how to ask for a refund within 30 days.",
     ("refunds", "payments"), True),
    ("troubleshooting", "Clear your browser cache", 2,
     "Clear cached files when pages look out of date or will not load.",
     ("browser", "cache"), True),
    ("billing", "Download past invoices", 9,
     "Find every invoice of the last seven years and download it as a PDF.",
     ("invoices", "pdf"), True),
    ("billing", "Add a billing contact", 4,
     "Send invoices and payment reminders to someone else in your company.",
     ("contacts", "invoices"), True),
    ("billing", "Cancel your subscription", 12,
     "Stop your plan at the end of the billing period and keep your data for 90 days.",
     ("subscription", "cancel"), True),
    ("billing", "Change your billing address", 6,
     "Update the address printed on invoices and used to work out sales tax.",
     ("address", "tax"), True),
    ("billing", "Apply a discount code", 10,
     "Redeem a promotional code before you pay, or on your next renewal.",
     ("discounts",), True),
    ("billing", "Pay by bank transfer", 5,
     "Pay invoices by bank transfer: the reference to quote and how long it takes.",
     ("payments", "bank"), True),
    ("billing", "Understand proration", 11,
     "How a change of plan in the middle of a period is charged or credited.",
     ("proration", "plans"), True),
    ("billing", "Switch to annual billing", 8,
     "Move from monthly to yearly payments and what happens to your current period.",
     ("plans", "annual"), True),
    ("billing", "Set up tax exemption", 7,
     "Send your exemption certificate so that invoices leave out sales tax.",
     ("tax", "exemption"), True),
    ("billing", "Pay with a purchase order", 0,
     "Draft: paying by purchase order is not available yet.",
     ("payments", "draft"), False),
    ("billing", "Reseller billing", 13,
     "Archived: resellers are billed through the partner portal now.",
     ("resellers", "archived"), False),
)

# (section, title, weight): kb_faq items, numbered after the articles.
KB_FAQS: tuple[tuple[str, str, int], ...] = (
    ("billing", "Why was I charged twice?", -1),
)

KB_CREATED_BASE = 1767225600  # 2026-01-01 00:00:00 UTC


def kb_created(n: int) -> int:
    """The ``n``-th item's creation time: a day each, in an order that is none of id, weight or
    title order within any section (5 and 24 are coprime, so the days are all distinct)."""
    return KB_CREATED_BASE + ((n * 5) % 24 + 1) * 86400


def kb_uuid(n: int) -> str:
    """The fixed UUID of the ``n``-th article (1-based): ``6b0d0c00-0000-4000-8000-0000000000nn``."""
    return f"{KB_NAMESPACE}0000-4000-8000-{n:012d}"


# ---------------------------------------------------------------------------- canvas_home

CANVAS_NAMESPACE = "ca0a5000-"
HOME_UUID = f"{CANVAS_NAMESPACE}0000-4000-8000-000000000001"


def component_uuid(n: int) -> str:
    """Component instances get fixed UUIDs in the fixture's namespace too."""
    return f"{CANVAS_NAMESPACE}c000-4000-8000-{n:012d}"


HOME_COMPONENTS: list[dict[str, Any]] = [
    {"uuid": component_uuid(1), "component_id": "sdc.apg.hero", "inputs": {
        "heading": "Welcome to the help center",
        "subheading": "Answers about your account, billing and everyday use.",
        "cta_text": "Browse all articles", "cta_url": "/kb"}},
    {"uuid": component_uuid(2), "component_id": "sdc.apg.section",
     "inputs": {"title": "Popular topics"}},
    {"uuid": component_uuid(3), "component_id": "sdc.apg.card", "parent_uuid": component_uuid(2),
     "slot": "content", "inputs": {"title": "Getting started",
                                   "body": "Set up your first project in minutes.",
                                   "url": "/kb/getting-started"}},
    {"uuid": component_uuid(4), "component_id": "sdc.apg.card", "parent_uuid": component_uuid(2),
     "slot": "content", "inputs": {"title": "Billing",
                                   "body": "Invoices, payment methods and refunds.",
                                   "url": "/kb/billing"}},
]


def _region(n: int, region: str, tree: list[dict[str, Any]]) -> dict[str, Any]:
    components = sorted({f"canvas.component.{item['component_id']}" for item in tree})
    return {
        "uuid": _config_uuid(100 + n), "langcode": "en", "status": True,
        "dependencies": {"config": components, "theme": ["olivero"]},
        "id": f"olivero.{region}", "theme": "olivero", "region": region,
        "component_tree": tree,
    }


CANVAS_CONFIG: dict[str, dict[str, Any]] = {
    "canvas.page_region.olivero.header": _region(1, "header", [
        {"uuid": component_uuid(5), "component_id": "block.system_branding_block",
         "inputs": {"use_site_logo": True, "use_site_name": True}},
        {"uuid": component_uuid(6), "component_id": "block.system_menu_block.main",
         "inputs": {"level": 1, "depth": 1}},
    ]),
    "canvas.page_region.olivero.footer": _region(2, "footer", [
        {"uuid": component_uuid(7), "component_id": "sdc.apg.paragraph",
         "inputs": {"text": "Still stuck? Contact support and we will get back to you within "
                            "one working day."}},
    ]),
}

# ---------------------------------------------------------------------------- kb_notices

# A notice board shipped with a broken build, and the data the dataset's Views, content and
# config tasks read. Notices are interleaved by category; within every category the priority
# order, the title order, the date order and the creation order differ; three notices are
# unpublished; a second bundle (kb_incident) shares the category and priority fields; 13
# notices are published, more than a default pager's 10.
NOTICES_NAMESPACE = "7e0a1c00-"
NOTICE_CATEGORIES = (("maintenance", "Maintenance"), ("release", "Release"),
                     ("billing", "Billing"))

# (bundle, title, category, priority, date, products, published), in creation (UUID) order.
NOTICES: tuple[tuple[str, str, str, int, str, tuple[str, ...], bool], ...] = (
    ("kb_notice", "Scheduled database upgrade", "maintenance", 4, "2026-03-14", ("api", "dashboard"), True),
    ("kb_notice", "Version 3.2 released", "release", 2, "2026-02-02", ("dashboard",), True),
    ("kb_notice", "New invoice layout", "billing", 1, "2026-05-20", ("billing",), True),
    ("kb_notice", "API rate limits change", "release", 5, "2026-06-11", ("api",), True),
    ("kb_notice", "Weekend network maintenance", "maintenance", 2, "2026-01-09", ("api", "mobile"), True),
    ("kb_notice", "Mobile app 2.0", "release", 3, "2026-04-27", ("mobile",), True),
    ("kb_notice", "Storage migration plan", "maintenance", 5, "2026-07-01", ("dashboard",), False),
    ("kb_notice", "VAT shown per line", "billing", 3, "2026-03-03", ("billing",), True),
    ("kb_notice", "Search index rebuild", "maintenance", 1, "2026-05-05", ("dashboard",), True),
    ("kb_notice", "Single sign-on for teams", "release", 4, "2026-01-22", ("dashboard", "api"), True),
    ("kb_notice", "Payment provider switch", "billing", 5, "2026-06-30", ("billing", "api"), False),
    ("kb_notice", "Email delivery maintenance", "maintenance", 3, "2026-02-17", ("mobile",), True),
    ("kb_notice", "Offline mode preview", "release", 1, "2026-07-15", ("mobile",), False),
    ("kb_notice", "Backup window moved", "maintenance", 6, "2026-04-08", ("api",), True),
    ("kb_notice", "Annual plan discounts", "billing", 2, "2026-06-02", ("billing",), True),
    ("kb_notice", "Dark mode", "release", 6, "2026-03-29", ("dashboard", "mobile"), True),
    ("kb_incident", "Login outage on Monday", "maintenance", 9, "2026-02-23", ("api",), True),
    ("kb_incident", "Delayed invoices", "billing", 7, "2026-05-12", ("billing",), True),
)


def notice_uuid(n: int) -> str:
    """The fixed UUID of the ``n``-th notice (1-based): ``7e0a1c00-0000-4000-8000-0000000000nn``."""
    return f"{NOTICES_NAMESPACE}0000-4000-8000-{n:012d}"


# The broken build the fixture ships: the maintenance page lists drafts and incident reports
# (no published or content-type filter) and puts the most urgent last (ascending priority).
# In the shape Drupal 10.3.7 stores it on import (tests/ddev/real_kb_notices/): its dependencies
# recalculated (the modules alone) and an empty display_extenders on each display, so that a
# real site exports it as shipped and takes the recipe a second time.
BROKEN_NOTICES_VIEW: dict[str, Any] = {
    "uuid": _config_uuid(300), "langcode": "en", "status": True,
    "dependencies": {"module": ["node", "options"]},
    "id": "notices", "label": "Maintenance notices", "module": "views", "description": "",
    "tag": "", "base_table": "node_field_data", "base_field": "nid",
    "display": {
        "default": {"id": "default", "display_title": "Default", "display_plugin": "default",
                    "position": 0, "display_options": {
                        "title": "Maintenance notices",
                        "fields": {"title": {"id": "title", "table": "node_field_data",
                                             "field": "title", "plugin_id": "field"}},
                        "filters": {"field_notice_category_value": {
                            "id": "field_notice_category_value",
                            "table": "node__field_notice_category",
                            "field": "field_notice_category_value", "plugin_id": "list_field",
                            "operator": "or", "value": {"maintenance": "maintenance"}}},
                        "sorts": {"field_notice_priority_value": {
                            "id": "field_notice_priority_value",
                            "table": "node__field_notice_priority",
                            "field": "field_notice_priority_value", "plugin_id": "standard",
                            "order": "ASC"}},
                        "pager": {"type": "none", "options": {"offset": 0}},
                        "display_extenders": {}}},
        "page_1": {"id": "page_1", "display_title": "Page", "display_plugin": "page",
                   "position": 1, "display_options": {"path": "notices/maintenance",
                                                      "display_extenders": {}}},
    },
}


def build_notices(site: EmbeddedSite, store: Any) -> None:
    """kb_notices' config and content on the source site (``store`` is an open session)."""
    # Lazy: only this fixture is built through the entity API, as Field UI and the Add forms do.
    from ai_proving_ground.sites.embedded.bundle_api import create_node_type
    from ai_proving_ground.sites.embedded.field_api import FieldRequest, create_field

    save = site.config_save
    create_node_type(store, {"type": "kb_notice", "name": "Notice", "description":
                             "A dated announcement to customers, filed under one category."},
                     save, body=False)
    create_node_type(store, {"type": "kb_incident", "name": "Incident report", "description":
                             "What went wrong during an outage, and what was done."},
                     save, body=False)
    allowed = {"allowed_values": [{"value": v, "label": label} for v, label in NOTICE_CATEGORIES]}
    fields = (
        # The misconfigured field: the category is not required on notices (it is on incidents).
        ("kb_notice", "field_notice_category", "list_string", "Category", 1, False, allowed),
        ("kb_notice", "field_notice_priority", "integer", "Priority", 1, True, {}),
        ("kb_notice", "field_notice_date", "datetime", "Date", 1, True, {"datetime_type": "date"}),
        ("kb_notice", "field_notice_products", "string", "Products", -1, False, {}),
        ("kb_incident", "field_notice_category", "list_string", "Category", 1, True, allowed),
        ("kb_incident", "field_notice_priority", "integer", "Priority", 1, True, {}),
    )
    for bundle, name, field_type, label, cardinality, required, settings in fields:
        create_field(store, FieldRequest("node", bundle, name, field_type, label, cardinality,
                                         required, storage_settings=settings), save)
    save(store, "views.view.notices", BROKEN_NOTICES_VIEW)
    for n, (bundle, title, category, priority, date, products, published) in enumerate(
            NOTICES, start=1):
        values: dict[str, Any] = {"title": title, "status": published,
                                  "field_notice_category": category,
                                  "field_notice_priority": priority}
        if bundle == "kb_notice":
            values |= {"field_notice_date": date, "field_notice_products": list(products)}
        site.create_entity(store, "node", bundle, values, notice_uuid(n))


# ---------------------------------------------------------------------------- kb_menus

# The Support menu the site ships (kb_menus): two top-level links, one with a child, and a
# disabled link, so a task's "leave the Support menu as it is" is judged on what a visitor sees.
MENUS_NAMESPACE = "4d3e0000-"
SUPPORT_MENU = {"id": "support", "label": "Support",
                "description": "Where customers find help outside the knowledge base."}


def menu_link_uuid(n: int) -> str:
    """The fixed UUID of the ``n``-th Support menu link (1-based)."""
    return f"{MENUS_NAMESPACE}0000-4000-8000-{n:012d}"


# (title, uri, weight, parent link number or 0, expanded, enabled), in creation (UUID) order.
SUPPORT_LINKS: tuple[tuple[str, str, int, int, bool, bool], ...] = (
    ("Service status", "https://status.example.com", 0, 0, False, True),
    ("Maintenance notices", "internal:/notices/maintenance", 1, 0, True, True),
    ("Contact support", "https://example.com/contact", 0, 2, False, True),
    ("Community forum", "https://forum.example.com", 2, 0, False, False),
)


def build_menus(site: EmbeddedSite, store: Any) -> None:
    """kb_menus' menu and links on the source site (``store`` is an open session)."""
    # Lazy: only this fixture makes a menu, as the Add menu form does.
    from ai_proving_ground.sites.embedded.bundle_api import create_menu

    create_menu(store, SUPPORT_MENU, site.config_save)
    for n, (title, uri, weight, parent, expanded, enabled) in enumerate(SUPPORT_LINKS, start=1):
        values: dict[str, Any] = {"title": title, "link": {"uri": uri}, "menu_name": "support",
                                  "weight": weight, "expanded": expanded, "enabled": enabled}
        if parent:
            values["parent"] = f"menu_link_content:{menu_link_uuid(parent)}"
        site.create_entity(store, "menu_link_content", None, values, menu_link_uuid(n))


# ---------------------------------------------------------------------------- not exported

# A source site is a working site: it holds things no fixture captures.
OTHER_CONFIG: dict[str, dict[str, Any]] = {
    "node.type.page": {"uuid": _config_uuid(200), "langcode": "en", "status": True,
                       "dependencies": {}, "name": "Basic page", "type": "page",
                       "description": "Static pages such as About.", "help": "",
                       "new_revision": True, "preview_mode": 1, "display_submitted": False},
}
OTHER_PAGE_UUID = "0a0b0c0d-0000-4000-8000-000000000001"


def build(target: Path) -> EmbeddedSite:
    """Create the source site at ``target`` (absent or empty)."""
    init_bed(target)
    site = EmbeddedSite(target)
    # The base recipe leaves Canvas to canvas_home and menu links to kb_menus.
    site.install_modules(["canvas", "menu_link_content"])
    with site.session() as store:
        for name, data in {**KB_CONFIG, **CANVAS_CONFIG, **OTHER_CONFIG}.items():
            site.config_save(store, name, data)
        for n, (section, title, weight, summary, tags, published) in enumerate(KB_ARTICLES,
                                                                               start=1):
            site.create_entity(store, "node", "kb_doc", {
                "title": title, "status": published, "created": kb_created(n),
                "field_kb_section": section, "field_kb_summary": summary,
                "field_kb_weight": weight, "field_kb_tags": list(tags),
            }, kb_uuid(n))
        for n, (section, title, weight) in enumerate(KB_FAQS, start=len(KB_ARTICLES) + 1):
            site.create_entity(store, "node", "kb_faq", {
                "title": title, "status": True, "created": kb_created(n),
                "field_kb_section": section, "field_kb_weight": weight,
            }, kb_uuid(n))
        site.create_entity(store, "canvas_page", None, {
            "title": "Home", "status": True,
            "description": "The help center's front page.",
            "path": [{"alias": "/home"}],
            "components": HOME_COMPONENTS,
        }, HOME_UUID)
        site.create_entity(store, "node", "page", {"title": "About this site", "status": True},
                           OTHER_PAGE_UUID)
        build_notices(site, store)
        build_menus(site, store)
    return site


def main(argv: Sequence[str] | None = None) -> int:
    parser = ArgumentParser(prog="build_fixture_source.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("directory", help="where to create the source site (absent or empty)")
    args = parser.parse_args(argv)

    def act() -> int:
        target = Path(args.directory).absolute()
        build(target)
        print(target)
        return 0

    return run(act)


if __name__ == "__main__":
    raise SystemExit(main())
