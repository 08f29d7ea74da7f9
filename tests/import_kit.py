"""What a fresh interpreter has imported after running a snippet (start-up weight tests)."""

from __future__ import annotations

import ast
import subprocess
import sys

# The embedded site's write side: what validates and saves config and content. A command that
# only reads (config:get, config:list, reset) must import none of it.
WRITE_SIDE = ("sites.embedded.writes", "content_model", "config_rules", "config_schema",
              "raw_config", "file_items")


def imported_after(code: str, *fragments: str) -> list[str]:
    """The modules whose names contain one of ``fragments`` once ``code`` has run in a new
    interpreter (this one's, so the package under test is the one imported)."""
    probe = (f"import sys\n{code}\n"
             f"print(sorted(m for m in sys.modules if any(f in m for f in {fragments!r})))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, check=True)
    found = ast.literal_eval(done.stdout.splitlines()[-1])
    assert isinstance(found, list)
    return [str(name) for name in found]
