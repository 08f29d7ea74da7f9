"""The pinned real agent CLIs, installed from npm into a cache outside the repository.

One owner of the pins: the test fixture and ``.ci/run`` (``python3 tests/support/agent_clis.py``)
both install from here. The cache is ``$AI_PG_AGENT_CLI_CACHE``, else
``~/.cache/apg-agent-clis``; nothing is ever installed into the repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

# package -> (version tested, the executable it installs, what `--version` prints first)
PINS: dict[str, tuple[str, str, str]] = {
    "@anthropic-ai/claude-code": ("2.1.332", "claude", "2.1.332 (Claude Code)"),
    "@openai/codex": ("0.169.0", "codex", "codex-cli 0.169.0"),
}
INSTALL_TIMEOUT_S = 900


@dataclass(frozen=True)
class AgentClis:
    """Where the installed CLIs are, or why they are not."""

    bin_dir: Path
    missing: str = ""  # empty when every pinned CLI answers with its pinned version


def cache_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    configured = environ.get("AI_PG_AGENT_CLI_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "apg-agent-clis"


def _installed(bin_dir: Path) -> list[str]:
    """The pinned packages not (or not at their pinned version) in ``bin_dir``."""
    wrong = []
    for package, (version, executable, banner) in PINS.items():
        path = bin_dir / executable
        try:
            done = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                                  timeout=60, stdin=subprocess.DEVNULL)
            ok = done.returncode == 0 and done.stdout.strip().startswith(banner)
        except (OSError, subprocess.TimeoutExpired):
            ok = False
        if not ok:
            wrong.append(f"{package}@{version}")
    return wrong


def ensure(cache: Path) -> AgentClis:
    """Install the pinned CLIs into ``cache`` unless they are there already."""
    bin_dir = cache / "node_modules" / ".bin"
    wanted = _installed(bin_dir)
    if not wanted:
        return AgentClis(bin_dir)
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        return AgentClis(bin_dir, f"node and npm are not on PATH, so {', '.join(wanted)} "
                                  "cannot be installed (apt-get install nodejs npm)")
    cache.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(cache), "--no-audit", "--no-fund",
                               *wanted], capture_output=True, text=True,
                              timeout=INSTALL_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return AgentClis(bin_dir, f"npm install {' '.join(wanted)} took over {INSTALL_TIMEOUT_S}s")
    still = _installed(bin_dir)
    if still:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        return AgentClis(bin_dir, f"npm install {' '.join(still)} into {cache} failed "
                                  f"(exit {done.returncode}): {' | '.join(tail)}")
    return AgentClis(bin_dir)


def main() -> int:
    clis = ensure(cache_dir())
    if clis.missing:
        print(f"agent CLIs: {clis.missing}", file=sys.stderr)
        return 1
    print(clis.bin_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
