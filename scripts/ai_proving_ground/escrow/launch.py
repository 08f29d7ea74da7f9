"""Verify: choose the bed's escrow set and run its own verifier copy, a trusted ``python3 -I``."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from ai_proving_ground.escrow.locations import escrow_root, project_name
from ai_proving_ground.report import say
from ai_proving_ground.settings import DEFAULT_SETTINGS, Settings
from ai_proving_ground.verifier_file import VERIFIER_SOURCE, load_verifier


def select_set(approot: Path, names: Sequence[str],
               settings: Settings = DEFAULT_SETTINGS) -> Path | None:
    """The one escrow set for this bed and fixture names, by escrow metadata; None (after
    printing APG_ESCROW_NONE and the candidates) when there is not exactly one."""
    verifier = load_verifier()
    root = str(escrow_root(settings))
    wanted = sorted(set(names))
    ref = settings.baseline_ref
    matches, others = verifier.find_sets(root, project_name(approot), str(approot), wanted, ref)
    if len(matches) != 1:
        verifier.report_none(root, str(approot), wanted, ref, matches, others)
        return None
    chosen = Path(matches[0]["dir"])
    say("APG_ESCROW_SELECTED", str(chosen))
    return chosen


def verify(approot: Path, names: Sequence[str], set_dir: Path | None = None,
           restore: bool = False, settings: Settings = DEFAULT_SETTINGS) -> int:
    """Run the escrowed verifier copy on the bed; its exit code."""
    chosen = set_dir.absolute() if set_dir is not None else select_set(approot, names, settings)
    if chosen is None:
        return 1
    copy = chosen / VERIFIER_SOURCE.name
    if not copy.is_file():
        say("APG_ESCROW_UNREADABLE", f"{copy} is missing; is {chosen} an escrow set directory?")
        return 2
    command = [sys.executable, "-I", str(copy), str(approot), str(chosen)]
    return subprocess.run(command + (["--restore"] if restore else []), check=False).returncode
