"""Campaigns on a local Ray cluster: the throughput of two bed actors over one, and Ray's cost.

``python -m ai_proving_ground.bench.ray_campaign [--attempts N] [--sleep-s S] [--repeat R]``
(the ray extra installed) runs real campaigns in-process, as :mod:`bench.campaign` does, on its
template bed with its agent that only sleeps ``sleep_s``:

* ``beds_ratio``: attempts per second on two bed actors over one, each on its marginal cost
  (:func:`bench.campaign._marginal`: the set-up and the first round left out), interleaved, best
  of ``repeat`` each. Issue 23's goal: at least 1.8.
* ``overhead_s``: what an attempt costs beyond the agent's sleep at one job: on the Ray executor
  and on the local executor, side by side (the bed work is the same; the difference is Ray's).

Without a Ray already initialised, each Ray campaign starts its own local cluster (127.0.0.1),
whose start-up the marginal cost leaves out.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ai_proving_ground.bench.campaign import SLEEPER, TASK, _marginal, _seconds, make_template
from ai_proving_ground.campaigns.records import CampaignFiles, read_attempt
from ai_proving_ground.campaigns.runner import RunnerOptions, run_campaign
from ai_proving_ground.paths import project_dir

BEDS_RATIO_GOAL = 1.8  # issue 23


def _campaign(workdir: Path, template: Path, name: str, attempts: int, jobs: int,
              executor: str) -> list[float]:
    """One campaign of the sleeping agent; its attempts' end times, sorted."""
    spec = workdir / f"{name}.json"
    spec.write_text(json.dumps({  # JSON is YAML; the spec of bench.campaign
        "name": "bench", "dataset": str(project_dir("datasets") / "build_tasks.yml"),
        "tasks": [TASK], "arms": {"a": {"description": "as reset"},
                                  "b": {"description": "as reset too"}},
        "agents": [SLEEPER], "models": [None], "repeats": (attempts + 1) // 2, "seed": 1,
        "jobs": jobs, "bed": str(template)}), encoding="utf-8")
    out = workdir / f"{name}-out"
    options = RunnerOptions(spec_path=spec, out=out, beds=workdir / f"{name}-beds",
                            executor=executor)
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        result = run_campaign(options)
    files = CampaignFiles(out)
    records = [read_attempt(files.attempt(order)) for order in range(attempts + attempts % 2)]
    outcomes = {r.outcome for r in records}
    if result.exit_code != 0 or outcomes != {"fail"}:  # the sleeper leaves the task unbuilt
        raise RuntimeError(f"bench campaign {name} gave exit {result.exit_code}, outcomes "
                           f"{sorted(o or '-' for o in outcomes)}: see {out}")
    return sorted(_seconds(r.finished_at) for r in records)


def measure_ray(workdir: Path, attempts: int = 6, sleep_s: float = 2.0,
                repeat: int = 1) -> dict[str, Any]:
    """``beds_ratio`` (Ray, two bed actors over one) and ``overhead_s`` (Ray's, local's)."""
    workdir.mkdir(parents=True, exist_ok=True)
    template = make_template(workdir, sleep_s)
    marginal: dict[str, list[float]] = {"ray-1": [], "ray-2": [], "local-1": []}
    for index in range(repeat):
        for key in marginal:  # interleaved: a burst of load hits each alike
            executor, jobs = key.split("-")
            ends = _campaign(workdir, template, f"{key}-{index}", attempts, int(jobs), executor)
            marginal[key].append(_marginal(ends, int(jobs)))
    one, two, local = (min(marginal[k]) for k in ("ray-1", "ray-2", "local-1"))
    return {"attempts": attempts, "sleep_s": sleep_s,
            "beds1_attempts_per_s": round(1 / one, 4), "beds2_attempts_per_s": round(1 / two, 4),
            "beds_ratio": round(one / two, 3), "beds_ratio_goal": BEDS_RATIO_GOAL,
            "ray_overhead_s": round(one - sleep_s, 4), "local_overhead_s": round(local - sleep_s, 4)}


def unavailable() -> str | None:
    """Why the Ray part cannot run here (None: it can), looked up without importing Ray."""
    if importlib.util.find_spec("ray") is None:
        return "the ray extra is not installed (pip install -e '.[ray]'; nox -s bench installs it)"
    return None


def bench_part(workdir: Path, attempts: int, sleep_s: float) -> tuple[dict[str, Any], list[str]]:
    """``python -m ai_proving_ground.bench``'s Ray part: its results and lines; skipped (saying
    why) without the extra, or with ``attempts`` 0."""
    why = unavailable() if attempts else "--ray-attempts 0"
    if why is not None:
        return {"skipped": why}, [f"ray campaign: skipped: {why}"]
    results = measure_ray(workdir, attempts, sleep_s)
    return results, describe(results)


def describe(results: dict[str, Any]) -> list[str]:
    return [f"ray campaign 2 vs 1 bed actors, an agent that sleeps {results['sleep_s']:g}s, "
            f"{results['attempts']} attempts: {results['beds2_attempts_per_s']:.3f} vs "
            f"{results['beds1_attempts_per_s']:.3f} attempts/s, ratio {results['beds_ratio']:.2f} "
            f"(goal at least {results['beds_ratio_goal']})",
            f"per attempt beyond the agent's sleep, one job: ray {results['ray_overhead_s']:.3f}s, "
            f"local {results['local_overhead_s']:.3f}s"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ai_proving_ground.bench.ray_campaign")
    parser.add_argument("--attempts", type=int, default=6)
    parser.add_argument("--sleep-s", type=float, default=2.0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="apg-bench-ray-") as workdir:
        results = measure_ray(Path(workdir), args.attempts, args.sleep_s, args.repeat)
    for line in describe(results):
        print(line)
    print(json.dumps(results), file=sys.stderr)
    print(f"({time.perf_counter() - started:.0f}s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
