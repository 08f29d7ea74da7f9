"""The escrow verifier: the one stdlib-only file escrow copies, loaded from it, and its launcher.

Hashes are taken by the verifier's own code (loaded from its file, never copied here), so escrow
and verify can never disagree about how a tree is read.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType

from ai_proving_ground.errors import ApgError
from ai_proving_ground.paths import PROJECT_ROOT

VERIFIER_SOURCE = PROJECT_ROOT / "scripts" / "escrow_verify.py"


LAUNCHER = "escrow-verify.sh"


LAUNCHER_TEXT = """\
#!/usr/bin/env bash
# Written by apg escrow: run this set's verifier with a trusted interpreter, never the bed's.
#   /usr/bin/bash "$ESCROW_SET_DIR/escrow-verify.sh" "$BED_APPROOT" "$ESCROW_SET_DIR" [--restore]
# Interpreter: $AI_PG_ESCROW_PYTHON, else /usr/bin/python3, else python3 on PATH (3.9 or newer).
set -eu
here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
python=${AI_PG_ESCROW_PYTHON:-}
if [ -z "$python" ]; then
  if [ -x /usr/bin/python3 ]; then
    python=/usr/bin/python3
  else
    python=$(command -v python3) || { echo "APG_USAGE no python3; set AI_PG_ESCROW_PYTHON" >&2; exit 2; }
  fi
fi
exec "$python" -I "$here/escrow_verify.py" "$@"
"""


@cache
def load_verifier(path: Path = VERIFIER_SOURCE) -> ModuleType:
    """The verifier module (stdlib only, so loading it runs nothing of the bed's)."""
    spec = importlib.util.spec_from_file_location("apg_escrow_verify", path)
    if spec is None or spec.loader is None or not path.is_file():
        raise ApgError("APG_INSTALL_BROKEN", f"{path} is missing; reinstall the project")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
