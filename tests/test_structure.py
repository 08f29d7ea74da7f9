"""The package's shape: every module imports on its own, and no import hides inside a function
except to keep start-up light (and then a comment says so)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from ai_proving_ground.paths import PACKAGE_DIR
from import_kit import WRITE_SIDE, imported_after

# Modules that need an optional extra; each is imported when the extra is installed.
OPTIONAL = {"ai_proving_ground.integrations.inspect_ai": "inspect_ai"}

# Each module is imported in a child forked from an interpreter that has imported nothing of
# the package, so a cycle that only works in one import order shows up. Third-party libraries
# are loaded once in the parent: they are not what is under test, and they are slow to import.
IMPORT_EACH = """
import importlib, os, sys, traceback
for library in ("yaml", "jsonschema", "inspect_ai"):
    try:
        importlib.import_module(library)
    except ImportError:
        pass
assert not [m for m in sys.modules if m.startswith("ai_proving_ground")]
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        failed.append(name)
print(" ".join(failed))
"""


def package_modules() -> list[str]:
    names = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
        if parts[-1] == "__main__":
            continue  # running, not importing, is what a __main__ module is for
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


def _installed(distribution: str) -> bool:
    done = subprocess.run([sys.executable, "-c", f"import {distribution}"], capture_output=True,
                          check=False)
    return done.returncode == 0


def test_every_module_imports_in_a_fresh_interpreter() -> None:
    names = [n for n in package_modules() if n not in OPTIONAL or _installed(OPTIONAL[n])]
    assert len(names) > 50
    done = subprocess.run([sys.executable, "-c", IMPORT_EACH, *names], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [], done.stderr


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every import inside a function that no start-up comment explains."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for function in ast.walk(ast.parse(text)):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in function.body:
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    here, above = lines[inner.lineno - 1], lines[inner.lineno - 2]
                    explained = any("start-up" in line.lower() and "#" in line
                                    for line in (here, above))
                    if not explained:
                        found.append((inner.lineno, here.strip()))
    return sorted(set(found))


def test_imports_inside_functions_say_they_are_for_start_up_time() -> None:
    unexplained = {str(path.relative_to(PACKAGE_DIR)): hits for path in PACKAGE_DIR.rglob("*.py")
                   if (hits := function_level_imports(path))}
    assert unexplained == {}, ("an import inside a function must be for start-up time, with a "
                               "'# ... start-up ...' comment on or above it; to break a cycle, "
                               f"move code instead: {unexplained}")


def test_the_scan_finds_an_unexplained_import(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("def f():\n    import json\n    return json\n\n"
                      "def g():\n    # Lazy for start-up time: yaml is slow to import.\n"
                      "    import yaml\n    return yaml\n", encoding="utf-8")
    assert function_level_imports(module) == [(2, "import json")]


def test_the_driver_registry_imports_a_driver_only_when_it_is_looked_up(tmp_path: Path) -> None:
    probe = ("import sys\n"
             "from ai_proving_ground.sites.base import driver_names, get_driver\n"
             "loaded = lambda: sorted(m for m in sys.modules if m.endswith('.driver'))\n"
             "print(driver_names(), loaded())\n"
             f"get_driver('sqlite', __import__('pathlib').Path({str(tmp_path)!r}))\n"
             "print(loaded())\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.splitlines() == [
        "['ddev', 'sqlite'] []", "['ai_proving_ground.sites.embedded.driver']"]


def test_site_config_get_imports_only_what_it_uses(bed: Path) -> None:
    code = ("from ai_proving_ground.cli.main import main\n"
            f"assert main(['site', '--approot', {str(bed)!r}, 'config:get', 'system.site']) == 0")
    # Config is stored as JSON and printed by yamldump: PyYAML ("yaml." names its modules) and
    # yamlio, which loads it, stay out; difflib only suggests a mistyped command.
    heavy = ("views", "recipe", "config_sync", "database", "fsutil", "jsonschema", "platform",
             "uuid", "tempfile", "yaml.", "yamlio", "difflib")
    assert imported_after(code, *heavy) == []


@pytest.mark.parametrize("command", [["config:get", "system.site"], ["config:list", "system."]])
def test_a_read_only_site_command_imports_no_write_side(bed: Path, command: list[str]) -> None:
    code = ("from ai_proving_ground.cli.main import main\n"
            f"assert main(['site', '--approot', {str(bed)!r}, *{command!r}]) == 0")
    assert imported_after(code, *WRITE_SIDE) == []
