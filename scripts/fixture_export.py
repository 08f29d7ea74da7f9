#!/usr/bin/env python3
"""Entry script for `apg fixture-export`; options and exit codes: ai_proving_ground.cli.fixture_export."""

from __future__ import annotations

import sys
from pathlib import Path

# Runnable from a checkout without installing: the package sits beside this script.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ai_proving_ground.cli.fixture_export import main

if __name__ == "__main__":
    raise SystemExit(main())
