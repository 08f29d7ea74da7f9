"""A campaign's agents checked against the bed they run on: each resolves, each arm may use it."""

from __future__ import annotations

from pathlib import Path

from ai_proving_ground.campaigns.spec import CampaignSpec
from ai_proving_ground.errors import ApgError
from ai_proving_ground.tasks.adapters import find_adapter
from ai_proving_ground.tasks.run import check_extra_env


def check_agents(spec: CampaignSpec, template: Path) -> None:
    """Every agent resolves (on a template the runner is yet to make, only the shipped adapters
    can), and every arm's env passes each adapter's allow-list."""
    for where, name, arms in spec.adapter_refs():  # the agents axis, then arms' own adapters
        try:
            adapter = find_adapter(name, template)
        except ApgError as exc:
            spec.fail(where, str(exc))
        for arm in arms:
            try:
                check_extra_env(arm.agent_env, adapter)
            except ApgError as exc:
                spec.fail(["arms", arm.name, "agent_env"], str(exc))
            if not arm.given.empty and adapter.header.credentials == "host-shared":
                spec.fail(["arms", arm.name], f"adapter {name!r} runs in the operator's HOME "
                          "(host-shared), where this arm's skills or instructions would stay")

