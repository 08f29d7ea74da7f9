"""A job's escrow runs its verifier as bytecode compiled once from the escrowed copy's hashed
bytes, and checks that bytecode's hash before every run as it checks the set's files."""

from __future__ import annotations

import contextlib
import io
import marshal
import os
from importlib.util import MAGIC_NUMBER
from pathlib import Path

from campaign_kit import FIXTURES

from ai_proving_ground import proc
from ai_proving_ground.bed import clone_bed
from ai_proving_ground.campaigns.escrowed import COMPILED, VERIFIER, Escrowed
from ai_proving_ground.settings import Settings


def escrowed_bed(template: Path, tmp_path: Path) -> tuple[Path, Escrowed]:
    """A clone of ``template`` at tmp_path/bed, escrowed under tmp_path/escrow."""
    bed = tmp_path / "bed"
    clone_bed(template, bed)
    with contextlib.redirect_stderr(io.StringIO()):
        return bed, Escrowed.make(bed, FIXTURES, tmp_path / "escrow", Settings(fixtures=FIXTURES))


def test_the_compiled_verifier_judges_and_a_changed_one_never_runs(
        template: Path, tmp_path: Path) -> None:
    bed, escrowed = escrowed_bed(template, tmp_path)
    assert escrowed.compiled == tmp_path / "escrow" / COMPILED
    assert escrowed.compiled.read_bytes()[:4] == MAGIC_NUMBER
    env = proc.child_env(os.environ)
    verdict = escrowed.verify(bed, False, env)
    assert verdict.ok and verdict.lines[-1].startswith("APG_ESCROW_OK "), verdict.lines
    # The verifier's checks are the escrowed copy's: a judged file changed is still tampering.
    (bed / "recipes" / "apg_base" / "recipe.yml").write_text("name: planted\n")
    verdict = escrowed.verify(bed, False, env)
    assert verdict.exit_code == 1 and verdict.tampered, verdict.lines
    # Bytecode that says OK whatever it is shown is never run: the verdict comes from the hash.
    liar = compile("import sys; print('APG_ESCROW_OK x', file=sys.stderr)", "x", "exec")
    escrowed.compiled.write_bytes(escrowed.compiled.read_bytes()[:16] + marshal.dumps(liar))
    verdict = escrowed.verify(bed, False, env)
    assert (verdict.exit_code, verdict.lines) == (None, [f"APG_TAMPERED escrow:{COMPILED} changed"])


def test_a_copy_that_no_longer_matches_its_hash_is_not_compiled(
        template: Path, tmp_path: Path) -> None:
    _bed, escrowed = escrowed_bed(template, tmp_path)
    (escrowed.set_dir / VERIFIER).write_text("import sys\nsys.exit(0)\n")
    stale = Escrowed(set_dir=escrowed.set_dir, hashes=escrowed.hashes)
    stale.compile(tmp_path / "other.pyc")
    assert stale.compiled is None and not (tmp_path / "other.pyc").exists()
    assert stale.changes() == [f"{VERIFIER} changed"]
