"""The ``command`` check: what only a command run in the bed can observe."""

from __future__ import annotations

import os

from ai_proving_ground import proc
from ai_proving_ground.sites.base import StateAnswer
from ai_proving_ground.tasks.checks.base import Check, CheckContext, CheckResult, check_type


@check_type("command")
class Command(Check):
    """A command run in the bed must exit 0 (for what only a command can observe)."""

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        argv = [str(a) for a in self.spec["argv"]]
        timeout = float(self.spec.get("timeout_s", 60))
        finished = proc.run(argv, cwd=context.approot, env=proc.bed_env(os.environ), timeout_s=timeout,
                            stdout=proc.DEVNULL)
        if finished.error is not None:  # not found, not executable: a failed check, not a crash
            missing = "not found" in finished.error or "No such file" in finished.error
            return self.result(False, 0, None, f"{argv[0]} not found" if missing
                               else f"{argv[0]} could not run: {finished.error}")
        if finished.timed_out:
            return self.result(False, 0, None, f"timed out after {timeout:g}s")
        tail = finished.stderr.decode(errors="replace").strip().splitlines()[-3:]
        return self.result(finished.exit_code == 0, 0, finished.exit_code, " | ".join(tail))
