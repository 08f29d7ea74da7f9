"""The verifier is one stdlib-only Python 3.9 file that runs isolated, from anywhere."""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from escrow_kit import VERIFIER, Escrowed, clean_environ, make_escrow

SOURCE = VERIFIER.read_text(encoding="utf-8")
TREE = ast.parse(SOURCE)


def _imported_modules(tree: ast.AST) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import in the verifier"
            assert node.module is not None
            found.append(node.module)
    return found


def test_the_verifier_imports_only_the_standard_library() -> None:
    modules = _imported_modules(TREE)
    assert {"hashlib", "json", "os", "subprocess"} <= set(modules)  # the walk does see imports
    allowed = set(sys.stdlib_module_names) | {"__future__"}
    assert sorted({m for m in modules if m.split(".")[0] not in allowed}) == []
    # No dynamic imports that the AST walk above could not see.
    calls = [node.func for node in ast.walk(TREE) if isinstance(node, ast.Call)]
    names = {getattr(func, "id", getattr(func, "attr", "")) for func in calls}
    assert not names & {"__import__", "import_module", "exec", "eval", "compile"}


def test_the_verifier_needs_nothing_newer_than_python_3_9() -> None:
    # Syntax is checked below; vermin also knows when each stdlib function and argument arrived
    # (hashlib.file_digest is 3.11, zip(strict=) 3.10, ...).
    vermin = shutil.which("vermin")
    assert vermin, "vermin not found: pip install -e '.[test]' installs it"
    done = subprocess.run([vermin, "--no-tips", "--target=3.9-", "--violations",
                           "--eval-annotations", str(VERIFIER)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_verifier_is_python_3_9_syntax() -> None:
    ast.parse(SOURCE, feature_version=(3, 9))  # rejects match statements, parenthesised withs...
    # `X | Y` between types is evaluated at runtime outside annotations; forbid it there.
    in_annotations: set[int] = set()
    for node in ast.walk(TREE):
        roots = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            roots.append(node.returns)
        if isinstance(node, ast.arg) and node.annotation:
            roots.append(node.annotation)
        if isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        in_annotations.update(id(sub) for root in roots for sub in ast.walk(root))
    types = {"str", "int", "bool", "dict", "list", "tuple", "Entry", "Finding"}
    for node in ast.walk(TREE):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr) and id(node) not in in_annotations:
            for side in (node.left, node.right):
                assert not (isinstance(side, ast.Constant) and side.value is None), ast.unparse(node)
                assert not (isinstance(side, ast.Name) and side.id in types), ast.unparse(node)
    assert "from __future__ import annotations" in SOURCE
    assert SOURCE.rstrip().endswith('if __name__ == "__main__":\n    raise SystemExit(main())')


def _python39() -> str | None:
    """A real Python 3.9 (pyenv shims are skipped: they may not be activated)."""
    candidates = ["/usr/bin/python3.9", "/usr/local/bin/python3.9",
                  *sorted(str(p) for p in Path("~/.pyenv/versions").expanduser().glob("3.9*/bin/python3"))]
    return next((c for c in candidates if os.access(c, os.X_OK)), None)


def test_isolated_from_an_empty_directory_against_a_real_escrow(
        bed: Path, tmp_path: Path, empty_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The live package, the real escrow, the escrowed copy, ``python3 -I``, an empty cwd."""
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    e = make_escrow(bed, tmp_path / "escrow", empty_dir)
    done = subprocess.run(["python3", "-I", str(e.set_dir / "escrow_verify.py"), str(bed),
                           str(e.set_dir)], cwd=empty_dir, capture_output=True, text=True,
                          env=clean_environ(), timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, f"APG_ESCROW_OK {e.key}\n")
    assert os.listdir(empty_dir) == []


@pytest.mark.parametrize("which", ["/usr/bin/python3", "python3.9"])
def test_under_a_system_or_oldest_supported_python(escrowed: Escrowed, which: str) -> None:
    python = which if which.startswith("/") else _python39()
    if python is None or not os.access(python, os.X_OK):
        pytest.skip(f"{which} is not installed")
    version = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 9))"],
                             capture_output=True, text=True, check=False).stdout.strip()
    if version != "True":
        pytest.skip(f"{python} is older than 3.9")
    result = escrowed.verify(python=python)
    assert (result.rc, result.lines) == (0, [f"APG_ESCROW_OK {escrowed.key}"])
    (escrowed.bed / "recipes" / "apg_base" / "recipe.yml").chmod(0o700)
    result = escrowed.verify(python=python)
    assert (result.rc, result.findings) == (1, ["APG_TAMPERED recipes/apg_base/recipe.yml made-executable"])
    # The whole-bed snapshot's objects: checked, and put back from the escrowed pack.
    obj = sorted(escrowed.baseline.objects.iterdir())[0]
    obj.write_bytes(obj.read_bytes() + b"changed")
    result = escrowed.verify("--restore", python=python)
    assert f"APG_ESCROW_MISMATCH objects/{obj.name} modified" in result.lines, result.err
    assert f"APG_ESCROW_RESTORED objects/{obj.name}" in result.lines
    assert hashlib.sha256(obj.read_bytes()).hexdigest() == obj.name


def test_the_verifier_reads_no_yaml_and_runs_no_bed_code(escrowed: Escrowed) -> None:
    """A stdlib-named module planted beside the bed's verifier copy, a git hook and a GIT_DIR in
    the caller's environment change nothing: -I keeps the script's folder off sys.path, hooks
    are off (restoring the tag would run a reference-transaction hook) and GIT_* is dropped."""
    (escrowed.bed / "scripts" / "json.py").write_text("raise SystemExit('bed code ran')\n")
    hook = escrowed.bed / ".git" / "hooks" / "reference-transaction"
    marker = escrowed.bed.parent / "hook-ran"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    from ai_proving_ground.gitutil import git

    git(escrowed.bed, ["tag", "-d", escrowed.tag])
    result = escrowed.verify("--restore", copy=escrowed.bed / "scripts" / "escrow_verify.py",
                             selection=[], GIT_DIR="/nonexistent")
    # The hook is judging state (tampering, never restored); the tag is restored all the same.
    assert result.findings == [f"APG_ESCROW_MISMATCH tag {escrowed.tag} deleted",
                               "APG_TAMPERED .git/hooks/reference-transaction added"]
    assert f"APG_ESCROW_RESTORED tag {escrowed.tag}" in result.lines
    assert result.rc == 1
    assert not marker.exists()


def test_usage_and_unreadable_escrow(escrowed: Escrowed) -> None:
    result = escrowed.verify("--bogus")
    assert result.rc == 2 and "APG_USAGE unknown option --bogus" in result.err
    result = escrowed.verify(selection=["not/a-set"])
    assert result.rc == 2 and "APG_USAGE" in result.err
    copy = escrowed.set_dir / "baseline" / escrowed.baseline.dump.name
    copy.write_bytes(b"corrupted")
    result = escrowed.verify()
    assert result.rc == 2
    assert result.lines[0].startswith(f"APG_ESCROW_UNREADABLE baseline/{copy.name} changed since escrow")


def test_a_set_escrowed_for_another_bed_is_refused(escrowed: Escrowed, tmp_path: Path) -> None:
    other = tmp_path / "other-bed"
    shutil.copytree(escrowed.bed, other, symlinks=True)
    done = subprocess.run([sys.executable, "-I", str(escrowed.set_dir / "escrow_verify.py"),
                           str(other), str(escrowed.set_dir)], capture_output=True, text=True,
                          env=clean_environ(), check=False)
    assert done.returncode == 2 and done.stderr.startswith("APG_ESCROW_WRONG_BED")


JSON_CASES = ['{}', ' {"a": [1, 2.5, -3e4, true, false, null, "x\\u00e9"]} \n',
              '[NaN, Infinity, -Infinity]', '{"big": 12345678901234567890}', '"s"', '', '  ',
              '{"a": }', '{"a": 1} x', '{"a": 1}{"b": 2}', '\ufeff{}', '"a\tb"', "{'a': 1}"]


def _loaded(parse: object, text: str) -> tuple[str, str]:
    try:
        return "ok", repr(parse(text))  # type: ignore[operator]
    except ValueError:
        return "error", ""


@pytest.mark.parametrize("scanner", ["json's C scanner", "json itself"])
def test_the_verifier_reads_json_as_json_does(scanner: str) -> None:
    """Its reader (json's C scanner, so that a verify imports neither json nor re) takes and
    refuses what json.loads does; without the C scanner it is json.loads."""
    import json

    from ai_proving_ground.verifier_file import load_verifier

    verifier = load_verifier()
    if scanner == "json itself":
        verifier._make_scanner = None
    assert [_loaded(verifier._parse_json, case) for case in JSON_CASES] == \
        [_loaded(json.loads, case) for case in JSON_CASES]


def test_a_clean_verify_imports_neither_json_nor_re(escrowed: Escrowed) -> None:
    """json.decoder compiles regular expressions when imported: re, enum and functools were
    about 9 ms of CPU of each verify (two an attempt in a campaign)."""
    done = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime",
                           str(escrowed.set_dir / "escrow_verify.py"), str(escrowed.bed),
                           str(escrowed.set_dir)], cwd=escrowed.empty, capture_output=True,
                          text=True, env=clean_environ(), timeout=60, check=False)
    imported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert done.stderr.splitlines()[-1] == f"APG_ESCROW_OK {escrowed.key}"
    assert "hashlib" in imported  # the listing is read
    assert not imported & {"json", "json.decoder", "re", "enum"}
