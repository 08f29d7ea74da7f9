"""The network preflight: with ``--unshare-net``, which model endpoints reach the sandbox, or why
the run is refused before anything is written.

An adapter's model endpoints are its declared base URL variables
(:func:`ai_proving_ground.sandbox.relay.url_variables`: ``ANTHROPIC_BASE_URL`` for claude-code,
``OPENAI_BASE_URL`` for codex, any ``*_BASE_URL`` in an ``## Env:`` header) as the adapter will
get them (the host's value, or a campaign arm's). With the network cut, each one on loopback is
relayed into the sandbox (:mod:`ai_proving_ground.sandbox.relay`); one elsewhere, or a sandbox
that cannot relay (Landlock without namespaces; no sandbox at all, whose network cannot be cut),
refuses the run with ``APG_RUN_NET_REFUSED`` naming the variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ai_proving_ground.errors import ApgError
from ai_proving_ground.sandbox.confine import Backend
from ai_proving_ground.sandbox.relay import Endpoint, declared_endpoints


@dataclass(frozen=True)
class NetworkPreflight:
    """What the adapter's network is: all of it, or loopback plus the relayed endpoints."""

    network_cut: bool
    relayed: tuple[Endpoint, ...] = ()


def describe_relay(relayed: Sequence[Endpoint]) -> str:
    """``APG_RUN_NET_RELAYED``'s words: what reaches the sandbox through the cut."""
    if not relayed:
        return "the network is cut and no model endpoint is declared: nothing is relayed"
    shown = ", ".join(f"{e.variable} ({e.address})" for e in relayed)
    return (f"the network is cut; relayed into the sandbox on the same address: {shown}; "
            "nothing else is reachable")


def network_preflight(declared: Sequence[str], values: Mapping[str, str], network_cut: bool,
                      backend: Backend) -> NetworkPreflight:
    """The endpoints to relay when the network is cut (see the module doc)."""
    if not network_cut:
        return NetworkPreflight(network_cut=False)
    if backend.name == "none":
        raise ApgError("APG_RUN_NET_REFUSED", "--unshare-net needs a sandbox, and this adapter "
                       "would run unconfined (AI_PG_SANDBOX=none or no sandbox here), with the "
                       "host's whole network; install bubblewrap or run without --unshare-net",
                       exit_code=2)
    found = tuple(declared_endpoints(values, declared))
    if found and not backend.can_relay:
        names = ", ".join(e.variable for e in found)
        raise ApgError("APG_RUN_NET_REFUSED", f"{names} cannot be relayed: the {backend.name} "
                       f"sandbox here has no network namespace ({'; '.join(backend.notes)}); "
                       "run as root or allow unprivileged user namespaces, install bubblewrap, "
                       "or run without --unshare-net", exit_code=2)
    return NetworkPreflight(network_cut=True, relayed=found)

