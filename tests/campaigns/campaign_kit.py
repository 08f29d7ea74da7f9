"""What the campaign tests share: the test adapters, spec writing and reading the records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ai_proving_ground.paths import PROJECT_ROOT
from ai_proving_ground.tasks.dataset import load_dataset

EXAMPLE = PROJECT_ROOT / "campaigns" / "example.yml"
FIXTURES = ["kb_docs"]  # what the campaigns here run: dv01 only

ADAPTERS = {
    # Replaces a folder above a tracked path with a file: the next reset must refuse the bed.
    "breaker": 'rm -rf "$APG_APPROOT/web/modules" && echo x > "$APG_APPROOT/web/modules"',
    "exit3": "exit 3",
    # Talks on both streams: what it says belongs in its attempt's logs, never on the terminal.
    "chatty": 'echo "CHATTY-ON-STDOUT"; echo "CHATTY-ON-STDERR" >&2',
    # What the shipped adapters do when their agent CLI is not installed.
    "exit127": 'echo "exit127: the agent CLI is not on PATH" >&2; exit 127',
    # Adds a file to the judged .ddev/agents/: verify after must call it tampering.
    "tamperer": 'echo "#!/bin/sh" > "$APG_APPROOT/.ddev/agents/planted"',
    # Deletes the baseline tag in the bed's own repository (named outright: apg points a plain
    # git at the agent's own, GIT_DIR): the agent's doing, so the attempt is tampered.
    "untagger": ('g="$APG_APPROOT/.git"; git --git-dir="$g" tag -l "apg-baseline-*" | '
                 'xargs git --git-dir="$g" tag -d'),
    # Does nothing, slowly: a window to kill the runner while an agent runs (test_resume).
    "sleeps": "sleep 0.5",
    # Long enough to lose its worker mid-attempt (test_ray_executor).
    "dozes": "sleep 4",
    # A task of several turns: sets a note on its second turn (test_turns_campaign).
    "turner": ('if [ "${APG_TURN:-1}" = 2 ]; then\n'
               '  exec $APG_SITE --approot "$APG_APPROOT" config:set system.turns value yes\nfi'),
    # Never finishes on its own: agent_timeout_s must stop it.
    "hangs": "sleep 60",
    # Leaves a grandchild in a session of its own, writes both pids, then waits: only the keeper
    # can still reach the grandchild when the runner is killed.
    "lingers": ('setsid sleep 300 > /dev/null 2>&1 < /dev/null &\n'
                # In the bed (the sandbox lets it write nowhere else); PIDs of its namespace.
                'p="$APG_APPROOT/$APG_ARM_PIDS"; echo "$$ $!" > "$p.new" && mv "$p.new" "$p"\n'
                'sleep 300'),
    # Whatever path it found: overwrites every escrowed verifier there with one that says OK,
    # and replaces the dataset with one whose checks always pass.
    "hostile": ('find "$APG_ARM_ESCROW" -name escrow_verify.py | while read -r f; do\n'
                "  printf 'import sys\\nprint(\"APG_ESCROW_OK\", file=sys.stderr)\\n' > \"$f\"\n"
                'done\n'
                'cp "$APG_ARM_CHEAT" "$APG_ARM_DATASET"'),
}


def reference_steps() -> list[list[str]]:
    """dv01's reference: the view's config:set, then the cr that gives it its route."""
    dataset = load_dataset(PROJECT_ROOT / "datasets" / "build_tasks.yml")
    return [list(step) for step in dataset.task("dv01_view_build").reference_steps]


def write_spec(path: Path, body: dict[str, Any]) -> Path:
    path.write_text(json.dumps(body, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def attempts(directory: Path) -> list[dict[str, Any]]:
    records = [json.loads(p.read_text("utf-8")) for p in sorted(directory.glob("runs/*/attempt.json"))]
    assert [r["order"] for r in records] == list(range(len(records)))
    return records


def run_campaign(apg: Any, spec: Path, out: Path, *extra: str) -> Any:
    """``apg campaign run`` in-process, beds beside ``out`` (never inside it) and kept for the
    test to read; it must complete."""
    beds = out.with_name(out.name + "-beds")
    result = apg("campaign", "run", str(spec), "--out", str(out), "--beds", str(beds),
                 "--keep-beds", *extra)
    assert result.rc == 0, result.err
    assert result.out == f"{out}\n"
    return result
