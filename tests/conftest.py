"""Shared fixtures: one embedded bed built per session and copied per test, and in-process CLIs.

``bed`` is a fresh copy of a bed made with ``apg bed init``; ``content_bed`` is the same bed with
an ``article`` content type (fields below) defined through the driver. ``site``, ``bed_cli`` and
``apg`` run the command lines in-process and return ``(rc, out, err)``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import eee_official
from ai_proving_ground.bed import init_bed
from ai_proving_ground.gitutil import git
from ai_proving_ground.sites.embedded import config_sync
from ai_proving_ground.sites.embedded.driver import EmbeddedSite
from ai_proving_ground.yamldump import dumps

# Variables that steer the product (AI_PG_*, APG_*), point git elsewhere (GIT_*, set when tests
# run from a git hook) or carry agent credentials: no test may inherit them from the caller.
_INHERITED_PREFIXES = ("AI_PG_", "APG_", "GIT_")
_INHERITED_CREDENTIALS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "CODEX_API_KEY",
                          "CLAUDE_CODE_OAUTH_TOKEN")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--official-eee", metavar="PACKAGE_VERSION", default=None,
                     help="also check every envelope with this installed every-eval-ever "
                          "version (the eee nox session)")


def pytest_configure(config: pytest.Config) -> None:
    try:
        eee_official.activate(config.getoption("--official-eee"))
    except ValueError as exc:
        raise pytest.UsageError(str(exc)) from exc


def pytest_terminal_summary(terminalreporter: Any) -> None:
    official = eee_official.active()
    if official is not None:
        terminalreporter.write_line(f"every-eval-ever {official.version} (official package) "
                                    f"checked {official.checked} envelopes")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    official = eee_official.active()
    if official is not None and official.checked == 0 and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # a check that checked nothing fails


@pytest.fixture(autouse=True)
def _hermetic_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(_INHERITED_PREFIXES) or name in _INHERITED_CREDENTIALS:
            monkeypatch.delenv(name)


class CliResult(NamedTuple):
    """What one in-process command run gave: exit code, stdout and stderr."""

    rc: int
    out: str
    err: str


MainFn = Callable[[Sequence[str] | None], int]


def run_main(capsys: pytest.CaptureFixture[str], main: MainFn, argv: Sequence[str]) -> CliResult:
    """Call ``main(argv)``; argparse's SystemExit becomes the exit code, like the console script."""
    capsys.readouterr()  # drop anything printed before this command
    try:
        rc = main(list(argv))
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    captured = capsys.readouterr()
    return CliResult(rc, captured.out, captured.err)


# ---------------------------------------------------------------------------- content model

# The article type every content test shares: a required list field, an integer, a
# two-value string field and a reference field.
ARTICLE_CONFIG: dict[str, dict[str, Any]] = {
    "node.type.article": {"type": "article", "name": "Article"},
    "node.type.page": {"type": "page", "name": "Basic page"},
    "field.storage.node.field_rank": {
        "entity_type": "node", "field_name": "field_rank", "type": "integer", "cardinality": 1,
    },
    "field.storage.node.field_topic": {
        "entity_type": "node", "field_name": "field_topic", "type": "list_string",
        "cardinality": 1,
        "settings": {"allowed_values": [{"value": "kb", "label": "KB"},
                                        {"value": "news", "label": "News"}]},
    },
    "field.storage.node.field_tags": {
        "entity_type": "node", "field_name": "field_tags", "type": "string", "cardinality": 2,
    },
    "field.storage.node.field_related": {
        "entity_type": "node", "field_name": "field_related", "type": "entity_reference",
        "cardinality": -1, "settings": {"target_type": "node"},
    },
    "field.field.node.article.field_rank": {
        "entity_type": "node", "bundle": "article", "field_name": "field_rank", "label": "Rank",
    },
    "field.field.node.article.field_topic": {
        "entity_type": "node", "bundle": "article", "field_name": "field_topic",
        "label": "Topic", "required": True,
    },
    "field.field.node.article.field_tags": {
        "entity_type": "node", "bundle": "article", "field_name": "field_tags", "label": "Tags",
    },
    "field.field.node.article.field_related": {
        "entity_type": "node", "bundle": "article", "field_name": "field_related",
        "label": "Related",
    },
}


# ---------------------------------------------------------------------------- beds


def copy_bed(template: Path, target: Path) -> Path:
    """A copy of a template bed, ``.git`` and baselines included, symlinks kept as links."""
    shutil.copytree(template, target, symlinks=True)
    return target


BedCopier = Callable[[Path, Path], Path]


@pytest.fixture(scope="session")
def copy_template() -> BedCopier:
    """``copy_template(template, target)``: what every test's private bed is made with."""
    return copy_bed


ApprootMaker = Callable[..., Path]


@pytest.fixture
def make_approot(tmp_path: Path) -> ApprootMaker:
    """``make_approot(name, *subdirs)``: an empty app root ``tmp_path/name`` with those folders."""

    def make(name: str = "bed", *subdirs: str) -> Path:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        for subdir in subdirs:
            (root / subdir).mkdir(parents=True, exist_ok=True)
        return root

    return make


@pytest.fixture(scope="session")
def template_bed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bed made once per session by ``apg bed init``; tests get copies, never this one."""
    from ai_proving_ground.cli.bed import main

    target = tmp_path_factory.mktemp("template") / "bed"
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["init", str(target)])
    assert (rc, out.getvalue(), err.getvalue()) == (0, f"{target}\n", "")
    # The base recipe leaves Canvas to the fixture that needs it; the site tests use it directly,
    # so the template has it, exported and committed as bed init would have.
    site = EmbeddedSite(target)
    site.install_modules(["canvas"])
    config_sync.write_directory(target / "config" / "sync", site.all_config(), target)
    git(target, ["add", "-A"])
    git(target, ["commit", "--quiet", "--amend", "--no-edit"])
    return target


@pytest.fixture(scope="session")
def template_content_bed(template_bed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The template bed plus the article/page content model."""
    target = copy_bed(template_bed, tmp_path_factory.mktemp("template_content") / "bed")
    site = EmbeddedSite(target)
    with site.session() as store:
        for name, data in ARTICLE_CONFIG.items():
            site.config_save(store, name, data)
    return target


@pytest.fixture(scope="session")
def fixtures_template_bed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``apg bed init DIR kb_docs canvas_home``, once per session; tests get copies."""
    target = tmp_path_factory.mktemp("fixtures_template") / "bed"
    init_bed(target, ["kb_docs", "canvas_home"])
    return target


@pytest.fixture
def fixtures_bed(fixtures_template_bed: Path, tmp_path: Path) -> Path:
    """A fresh bed with the shipped fixtures kb_docs and canvas_home applied."""
    return copy_bed(fixtures_template_bed, tmp_path / "fixtures_bed")


@pytest.fixture
def bed(template_bed: Path, tmp_path: Path) -> Path:
    """A fresh bed (a copy of the session template) for one test."""
    return copy_bed(template_bed, tmp_path / "bed")


@pytest.fixture
def content_bed(template_content_bed: Path, tmp_path: Path) -> Path:
    """A fresh bed with the article/page content model defined."""
    return copy_bed(template_content_bed, tmp_path / "bed")


# ---------------------------------------------------------------------------- command lines


class SiteRunner:
    """``site(approot, *args)``: run ``apg site --approot APPROOT ARGS...`` in-process."""

    def __init__(self, capsys: pytest.CaptureFixture[str]) -> None:
        self.capsys = capsys

    def __call__(self, approot: Path, *args: str) -> CliResult:
        from ai_proving_ground.cli.site import main

        return run_main(self.capsys, main, ["--approot", str(approot), *args])

    def raw(self, *args: str) -> CliResult:
        """Run ``apg site ARGS...`` exactly as given (no --approot added)."""
        from ai_proving_ground.cli.site import main

        return run_main(self.capsys, main, list(args))


class MainRunner:
    """Run one ``main(argv)`` in-process and capture its output."""

    def __init__(self, capsys: pytest.CaptureFixture[str], main: MainFn) -> None:
        self.capsys = capsys
        self.main = main

    def __call__(self, *args: str) -> CliResult:
        return run_main(self.capsys, self.main, list(args))


@pytest.fixture
def site(capsys: pytest.CaptureFixture[str]) -> SiteRunner:
    return SiteRunner(capsys)


@pytest.fixture
def bed_cli(capsys: pytest.CaptureFixture[str]) -> MainRunner:
    from ai_proving_ground.cli.bed import main

    return MainRunner(capsys, main)


@pytest.fixture
def apg(capsys: pytest.CaptureFixture[str]) -> MainRunner:
    from ai_proving_ground.cli.main import main

    return MainRunner(capsys, main)


# ---------------------------------------------------------------------------- files on disk


class RecipeMaker:
    """``make_recipe(name, recipe_yml, files)``: a recipe directory under one root."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, name: str, recipe_yml: str, files: dict[str, str | dict[str, Any]]
                 | None = None, root: Path | None = None) -> Path:
        recipe_dir = (root or self.root) / name
        recipe_dir.mkdir(parents=True)
        (recipe_dir / "recipe.yml").write_text(textwrap.dedent(recipe_yml), encoding="utf-8")
        for rel, content in (files or {}).items():
            path = recipe_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            text = dumps(content) if isinstance(content, dict) else textwrap.dedent(content)
            path.write_text(text, encoding="utf-8")
        return recipe_dir


@pytest.fixture
def make_recipe(tmp_path: Path) -> RecipeMaker:
    return RecipeMaker(tmp_path / "recipes")


def write_module(approot: Path, name: str, info: dict[str, Any],
                 config: dict[str, dict[str, Any]] | None = None) -> Path:
    """``web/modules/custom/NAME/NAME.info.yml`` plus ``config/<folder>/<name>.yml`` files.

    ``config`` keys are ``install/<config name>`` or ``optional/<config name>``.
    """
    module_dir = approot / "web" / "modules" / "custom" / name
    module_dir.mkdir(parents=True, exist_ok=True)
    (module_dir / f"{name}.info.yml").write_text(
        dumps({"name": name.title(), "type": "module", **info}), encoding="utf-8")
    for rel, data in (config or {}).items():
        path = module_dir / "config" / f"{rel}.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dumps(data), encoding="utf-8")
    return module_dir


ModuleWriter = Callable[..., Path]


@pytest.fixture
def make_module() -> ModuleWriter:
    return write_module
