"""Campaign speed: the bed work of one attempt, and what a second job adds.

Both run real campaigns in-process (``campaigns.runner.run_campaign``, the local executor) on a
template bed with the kb_docs fixture and the shipped Views task, every phase of an attempt
included: verify before (the escrowed verifier), reset and doctor, the agent under its sandbox,
verify after, the model's diff, grade, the records.

* ``attempt_s``: the bed work of an attempt with a do-nothing agent (``nop``) at one job: the
  median time from one attempt's end to the next one's (``finished_at`` in the records, so the
  campaign's set-up is left out), best of ``repeat`` campaigns; ``attempt_cpu_s``: the CPU time
  (this process and its children) one more attempt costs: the difference between a campaign of
  2 + ``attempts`` attempts and one of 2, over ``attempts`` (a loaded machine disturbs it less).
* ``jobs_ratio``: attempts per second at two jobs over one, with an agent that only sleeps
  ``sleep_s``, each on its marginal cost: (last end - end of the first round) / (attempts - jobs),
  so the set-up, which two jobs pay twice, is left out. The campaigns at one and two jobs are
  interleaved, the best of ``repeat`` each taken. Two jobs of a perfect runner give 2.0.

Each part records the machine's one-minute load average when it starts and ends (``load``): on
a shared machine the wall times mean little without it; CPU time is disturbed less.
``python -m ai_proving_ground.bench.campaign`` runs this part alone.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.bed import init_bed
from ai_proving_ground.campaigns.records import CampaignFiles, read_attempt
from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign
from ai_proving_ground.paths import project_dir

# The goals (issue 21), printed beside the numbers.
ATTEMPT_GOAL_S = 0.15
JOBS_RATIO_GOAL = 1.9
JOB_COUNTS = (1, 2)  # the sleeping agent's campaigns: jobs=1 and jobs=2
FIXTURES = ["kb_docs"]
TASK = "dv01_view_build"
SLEEPER = "bench-sleep"


def make_template(workdir: Path, sleep_s: float) -> Path:
    """A provisioned bed with the adapter that sleeps (judged, so it is in place before
    provision records the bed's judging files)."""
    bed = workdir / "campaign-template"
    with contextlib.redirect_stderr(io.StringIO()):
        site = init_bed(bed, FIXTURES)
        agents = bed / ".ddev" / "agents"
        agents.mkdir(parents=True)
        script = agents / SLEEPER
        script.write_text(f"#!/bin/sh\n## Description: sleeps {sleep_s:g} s, nothing else\n"
                          f"## Credentials: none\nexec sleep {sleep_s:g}\n", encoding="utf-8")
        script.chmod(0o755)
        provision(bed, FIXTURES, site)
    return bed


def _campaign(workdir: Path, template: Path, name: str, agent: str, attempts: int,
              jobs: int) -> tuple[list[float], float, float]:
    """Run one campaign: its attempts' end times (sorted), its wall and its CPU seconds."""
    spec = workdir / f"{name}.json"
    spec.write_text(json.dumps({  # JSON is YAML
        "name": "bench", "dataset": str(project_dir("datasets") / "build_tasks.yml"),
        "tasks": [TASK], "arms": {"a": {"description": "as reset"},
                                  "b": {"description": "as reset too"}},
        "agents": [agent], "models": [None], "repeats": (attempts + 1) // 2, "seed": 1,
        "jobs": jobs, "bed": str(template)}), encoding="utf-8")
    out = workdir / f"{name}-out"
    options = RunnerOptions(spec_path=spec, out=out, beds=workdir / f"{name}-beds")
    start, cpu = time.perf_counter(), _cpu()
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        result = run_campaign(options)
    wall, used = time.perf_counter() - start, _cpu() - cpu
    files = CampaignFiles(out)
    records = [read_attempt(files.attempt(order)) for order in range(attempts + attempts % 2)]
    outcomes = {r.outcome for r in records}
    if result.exit_code != 0 or outcomes != {"fail"}:  # nop and sleep leave the task unbuilt
        raise RuntimeError(f"bench campaign {name} gave exit {result.exit_code}, outcomes "
                           f"{sorted(o or '-' for o in outcomes)}: see {out}")
    ends = sorted(_seconds(r.finished_at) for r in records)
    return ends, wall, used


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _seconds(stamp: str | None) -> float:
    assert stamp is not None
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def check_jobs_attempts(parser: argparse.ArgumentParser, attempts: int, option: str) -> None:
    """Exit 2 naming ``option`` unless the sleeping agent's campaigns have an attempt past each
    job's first round (the marginal cost is measured on those alone: none would divide by 0)."""
    if attempts <= max(JOB_COUNTS):
        parser.error(f"{option} must be more than {max(JOB_COUNTS)} (the largest job count "
                     f"measured: each job's first attempt is not timed), not {attempts}")


def _marginal(ends: list[float], jobs: int) -> float:
    """Seconds per attempt after the first round (each job's first attempt)."""
    return (ends[-1] - ends[jobs - 1]) / (len(ends) - jobs)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def measure_attempt(workdir: Path, template: Path, attempts: int, repeat: int) -> dict[str, Any]:
    gaps, cpus, load = [], [], [_load()]
    for index in range(repeat):
        _, _, small_cpu = _campaign(workdir, template, f"nop-small-{index}", "nop", 2, 1)
        ends, _, cpu = _campaign(workdir, template, f"nop-{index}", "nop", 2 + attempts, 1)
        gaps.append(round(statistics.median(b - a for a, b in itertools.pairwise(ends)), 4))
        cpus.append(round(max(0.0, (cpu - small_cpu) / attempts), 4))
    load.append(_load())
    return {"attempts": 2 + attempts, "attempt_s": min(gaps), "attempt_cpu_s": min(cpus),
            "attempt_s_each": gaps, "attempt_cpu_s_each": cpus, "load": load,
            "attempt_goal_s": ATTEMPT_GOAL_S}


def measure_jobs(workdir: Path, template: Path, attempts: int, repeat: int,
                 sleep_s: float) -> dict[str, Any]:
    marginal: dict[int, list[float]] = {1: [], 2: []}
    load = [_load()]
    for index in range(repeat):
        for jobs in JOB_COUNTS:  # interleaved: a burst of load hits both alike
            ends, _, _ = _campaign(workdir, template, f"sleep-{jobs}-{index}", SLEEPER,
                                   attempts, jobs)
            marginal[jobs].append(_marginal(ends, jobs))
    one, two = min(marginal[1]), min(marginal[2])
    load.append(_load())
    return {"attempts": attempts, "sleep_s": sleep_s,
            "jobs1_attempts_per_s": round(1 / one, 4), "jobs2_attempts_per_s": round(1 / two, 4),
            "jobs_ratio": round(one / two, 3), "jobs_ratio_goal": JOBS_RATIO_GOAL, "load": load}


def measure_campaigns(workdir: Path, attempts: int = 10, jobs_attempts: int = 8,
                      sleep_s: float = 2.0, repeat: int = 2) -> dict[str, Any]:
    """``attempt`` (nop) and ``jobs`` (the sleeping agent at one and two jobs)."""
    workdir.mkdir(parents=True, exist_ok=True)
    template = make_template(workdir, sleep_s)
    return {"attempt": measure_attempt(workdir, template, attempts, repeat),
            "jobs": measure_jobs(workdir, template, jobs_attempts, repeat, sleep_s)}


def describe(results: dict[str, Any]) -> list[str]:
    """The two lines ``nox -s bench`` prints, each number beside its goal and the load."""
    attempt, jobs = results["attempt"], results["jobs"]
    return [f"campaign bed work per attempt (a do-nothing agent, {attempt['attempts']} attempts, "
            f"best of {len(attempt['attempt_s_each'])}): {attempt['attempt_s']:.3f} s wall, "
            f"{attempt['attempt_cpu_s']:.3f} s CPU (goal ≤ {attempt['attempt_goal_s']} s; "
            f"{_load_text(attempt['load'])})",
            f"campaign jobs=2 / jobs=1 (an agent that sleeps {jobs['sleep_s']:g} s, "
            f"{jobs['attempts']} attempts): {jobs['jobs2_attempts_per_s']:.3f} vs "
            f"{jobs['jobs1_attempts_per_s']:.3f} attempts/s, ratio {jobs['jobs_ratio']:.2f} "
            f"(goal ≥ {jobs['jobs_ratio_goal']}; {_load_text(jobs['load'])})"]


def _load_text(load: list[float]) -> str:
    return (f"load average {load[0]:.2f} at the start, {load[-1]:.2f} at the end, "
            f"{os.cpu_count()} cores")


def main(argv: list[str] | None = None) -> int:
    """This part alone: ``python -m ai_proving_ground.bench.campaign``."""
    parser = argparse.ArgumentParser(prog="python -m ai_proving_ground.bench.campaign",
                                     description=__doc__)
    parser.add_argument("--attempts", type=int, default=10, help="nop attempts timed per campaign")
    parser.add_argument("--jobs-attempts", type=int, default=8)
    parser.add_argument("--sleep-s", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=2, help="campaigns of each kind (best taken)")
    args = parser.parse_args(argv)
    check_jobs_attempts(parser, args.jobs_attempts, "--jobs-attempts")
    with tempfile.TemporaryDirectory(prefix="apg-bench-campaign-") as workdir:
        results = measure_campaigns(Path(workdir), args.attempts, args.jobs_attempts,
                                    args.sleep_s, args.repeat)
    print("\n".join(describe(results)))
    print(json.dumps(results), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
