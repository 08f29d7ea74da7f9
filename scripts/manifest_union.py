#!/usr/bin/env python3
"""Entry script for `apg manifest-union`; options and exit codes: ai_proving_ground.cli.manifest_union."""

from __future__ import annotations

import sys
from pathlib import Path

# Runnable from a checkout without installing: the package sits beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ai_proving_ground.cli.manifest_union import main

if __name__ == "__main__":
    raise SystemExit(main())
