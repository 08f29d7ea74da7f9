"""Joining the Ray cluster and what its nodes declare, for the Ray executor and its bed facts.

A campaign on Ray talks to the cluster twice from the driver: once before campaign.json is
written, to read each DDEV project's facts on its node (:mod:`executors.ray_provenance`), and
then for the bed actors (:mod:`executors.ray_executor`). :func:`connect` joins once for both: a
local cluster this process started is started once, and stopped by the executor's close (a Ray
already initialised in this process, a test's cluster, is used as it is and left running).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ai_proving_ground.errors import ApgError

BED = "bed"  # the custom resource: one unit per bed a node can hold
GET_TIMEOUT_S = 60.0  # reading a result Ray says is ready, or a call on an idle actor
# Whether the Ray this process is connected to was started or joined by connect (so the
# executor's close shuts it down), not initialised by its caller: one flag a process, as Ray's
# own connection is.
_OWNED = {"ray": False}


def node_resource(project: Path) -> str:
    """The custom resource a node declares for each DDEV project it holds (``ray start
    --resources='{"bed": 1, "ddev:/srv/site-a": 1}'``): a DDEV job's actor (and the read of
    its facts) asks for it, so Ray places it on the node of its project and nowhere else."""
    return f"ddev:{project}"


def connect(ray: Any, address: str | None, beds: int, projects: Iterable[Path]) -> bool:
    """Join the cluster at ``address``, else start a local one on the loopback only (``beds``
    bed units and each DDEV project's resource: every project is on this node), unless this
    process is connected already. Whether the connection is this module's to shut down."""
    if ray.is_initialized():
        return _OWNED["ray"]
    try:
        if address is None:
            declared = {node_resource(project): 1.0 for project in projects}
            ray.init(address="local", include_dashboard=False, _node_ip_address="127.0.0.1",
                     num_cpus=max(1, beds), resources={BED: beds, **declared},
                     log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        where = address or "a local cluster"
        raise ApgError("APG_CAMPAIGN_RAY_UNREACHABLE", f"cannot start or join Ray at {where}: "
                       f"{exc}; pass --address of a running cluster (ray start --head)",
                       exit_code=1) from exc
    _OWNED["ray"] = True
    return True


def disconnect(ray: Any) -> None:
    """Leave (a local cluster: stop) the Ray :func:`connect` started or joined."""
    ray.shutdown()
    _OWNED["ray"] = False
