"""The escrow verifier's launcher: the bash script escrow writes beside the verifier copy.

The verifier itself is loaded from its file by :mod:`ai_proving_ground.verifier_file`: hashes are
taken and git is run by its own code, never copied here, so escrow and verify cannot disagree.
"""

from __future__ import annotations

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
