"""A DDEV campaign's bed facts on Ray, read on each project's node: the driver reads no project.

With ``--executor ray`` and ``ddev_beds``, each DDEV project lives on the node that declares it
(:func:`ray_cluster.node_resource`), maybe on no other. What the campaign record's provenance
takes from a bed (``provenance.bed_facts``: set key, baseline tag and commit, grader tree, the
adapters found in the project's ``.ddev/agents`` with their hashes and their CLIs' versions on
that node's PATH), and the checks the local runner makes of a project before campaign.json is
written (it is a provisioned DDEV project with its baseline, ``beds.check_ddev_bed``; every
agent resolves there and each arm may use it, ``agents_check``), are made by one small Ray task
per project on its node (:func:`read_here`), each waited for :data:`FACTS_TIMEOUT_S` at most.
Every project must agree with the first on every fact but paths and commits (a project may sit
at another path, provisioned at another time): one that differs refuses the campaign
(:data:`NODES_DIFFER`, naming the node, the project and each fact), as local DDEV jobs refuse a
project provisioned with another tag. The first project's facts go into campaign.json.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ai_proving_ground.campaigns import beds, provenance
from ai_proving_ground.campaigns.agents_check import check_agents
from ai_proving_ground.campaigns.spec import Campaign
from ai_proving_ground.errors import ApgError
from ai_proving_ground.executors.ray_cluster import GET_TIMEOUT_S, connect, node_resource
from ai_proving_ground.settings import Settings

# Each read is a baseline check, a grader-tree hash and each adapter CLI's --version (10 s
# each at most, provenance.VERSION_TIMEOUT_S); a node that never answers must not stall the start.
FACTS_TIMEOUT_S = 120.0
NODES_DIFFER = "APG_CAMPAIGN_RAY_NODES_DIFFER"
NO_FACTS = "APG_CAMPAIGN_RAY_NO_FACTS"
# A sliver of the project's resource: the read goes to its node, beside whatever holds the rest.
SHARE = 0.01


@dataclass(frozen=True)
class NodeFacts:
    """One project's facts as its node read them, or why it could not (``refused``: the token,
    the message and the exit code of the refusal, rebuilt on the driver; plain data to travel)."""

    node: str
    project: str
    tag: str = ""
    facts: dict[str, Any] | None = None
    refused: tuple[str, str, int] | None = None


def read_here(campaign: Campaign, project: str, settings: Settings) -> NodeFacts:
    """On the project's node: its checks and facts, PATH as the adapters get it here."""
    node, bed = socket.gethostname(), Path(project)
    try:
        _, tag = beds.check_ddev_bed(campaign, bed, settings)
        check_agents(campaign.spec, bed)
        facts = provenance.bed_facts(campaign, bed, settings, os.environ)
    except beds.CannotRun as exc:
        return NodeFacts(node, project, refused=("APG_CAMPAIGN_CANNOT_RUN", str(exc), 1))
    except ApgError as exc:
        return NodeFacts(node, project, refused=(exc.token, exc.message, exc.exit_code))
    return NodeFacts(node, project, tag, facts)


def collect(campaign: Campaign, projects: list[Path], settings: Settings, address: str | None,
            runtime_env: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """The baseline tag and the bed facts of ``projects`` (the first's; all agree), each read on
    its node; ``runtime_env``: what Ray gives the reading task's process (None: the node's)."""
    import ray  # for start-up time and an optional extra: only when this executor runs

    connect(ray, address, len(projects), projects)
    task = ray.remote(read_here)
    refs = [task.options(num_cpus=0, resources={node_resource(project): SHARE},
                         **({"runtime_env": runtime_env} if runtime_env else {}))
            .remote(campaign, str(project), settings) for project in projects]
    _, pending = ray.wait(refs, num_returns=len(refs), timeout=FACTS_TIMEOUT_S)
    for ref in pending:
        ray.cancel(ref, force=True)
    if pending:
        missing = [str(p) for p, ref in zip(projects, refs, strict=True) if ref in pending]
        raise ApgError(NO_FACTS, f"no node read the DDEV project(s) {', '.join(missing)} in "
                       f"{FACTS_TIMEOUT_S:g}s: a node must declare each project it holds (ray "
                       f"start --resources='{{\"bed\": 1, \"{node_resource(Path(missing[0]))}\": "
                       "1}'; README: Ray)", exit_code=1)
    try:
        read: list[NodeFacts] = ray.get(refs, timeout=GET_TIMEOUT_S)
    except ray.exceptions.RayError as exc:
        raise ApgError(NO_FACTS, f"reading a DDEV project on its node failed: {exc}",
                       exit_code=1) from None
    return agreed(read)


def agreed(read: list[NodeFacts]) -> tuple[str, dict[str, Any]]:
    """The first project's tag and facts, when every project could be read and agrees with it."""
    for got in read:
        if got.refused is not None:
            token, message, code = got.refused
            if token == "APG_CAMPAIGN_CANNOT_RUN":
                raise beds.CannotRun(f"on the node {got.node}: {message}")
            raise ApgError(token, f"on the node {got.node}: {message}", exit_code=code)
    first = read[0]
    assert first.facts is not None
    for got in read[1:]:
        assert got.facts is not None
        changed = provenance.facts_changes(first.facts, got.facts)
        if changed:
            raise ApgError(NODES_DIFFER, f"the DDEV project {got.project} on the node {got.node} "
                           f"differs from {first.project} on the node {first.node}: "
                           f"{'; '.join(changed)}; provision every project the same, with the "
                           "same adapters and agent CLIs (README: Ray)", exit_code=1)
    return first.tag, first.facts
