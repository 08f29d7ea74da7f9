"""Checks on Canvas component trees: one component (counted, its parent named, its inputs
compared), and a whole tree (every component, input, slot and parent, and the region's or
page's status)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

from ai_proving_ground.sites.base import CanvasRef, CanvasTree, ComponentItem, StateAnswer
from ai_proving_ground.tasks.checks.base import (
    Check,
    CheckContext,
    CheckResult,
    QueryPlan,
    check_type,
)


class _OnTree(Check):
    """A check on the tree of ``page`` (a page entity's UUID) or ``region`` (a config name)."""

    _index = -1

    def _ref(self) -> CanvasRef:
        if "page" in self.spec:
            return CanvasRef("page", self.spec["page"])
        return CanvasRef("region", self.spec["region"])

    def plan(self, plan: QueryPlan) -> None:
        self._index = plan.add(plan.canvas, self._ref())

    def _tree(self, answer: StateAnswer) -> CanvasTree | None:
        return answer.canvas[self._index]

    def _absent(self, expected: Any) -> CheckResult:
        ref = self._ref()
        return self.result(False, expected, None, f"no Canvas {ref.kind} {ref.key}")


@check_type("canvas_component")
class CanvasComponent(_OnTree):
    """Components with these inputs (a subset match, or every input with ``inputs_exact``), in
    this slot and parent: at least one, or exactly ``count``."""

    def _expected(self) -> dict[str, Any]:
        keys = ("component_id", "inputs", "inputs_exact", "slot", "parent_component_id",
                "parent_uuid", "count")
        return {k: self.spec[k] for k in keys if k in self.spec}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        tree = self._tree(answer)
        expected = self._expected()
        if tree is None:
            return self._absent(expected)
        candidates = [self._describe(tree, item) for item in tree.components
                      if item.component_id == self.spec["component_id"]]
        matching = sum(1 for c in candidates if self._matches(c))
        wanted = self.spec.get("count")
        passed = matching >= 1 if wanted is None else matching == wanted
        if passed:
            return self.result(True, expected, candidates)
        where = f"{tree.kind} {tree.key}"
        message = (f"no matching {self.spec['component_id']} in {where}" if not matching
                   else f"{matching} matching {self.spec['component_id']} in {where}, "
                        f"expected {wanted}")
        return self.result(False, expected, candidates, message)

    @staticmethod
    def _describe(tree: CanvasTree, item: ComponentItem) -> dict[str, Any]:
        parents = {c.uuid: c.component_id for c in tree.components}
        return {"uuid": item.uuid, "component_id": item.component_id, "inputs": item.inputs,
                "slot": item.slot, "parent_uuid": item.parent_uuid,
                "parent_component_id": parents.get(item.parent_uuid or "")}

    def _matches(self, found: dict[str, Any]) -> bool:
        wanted_inputs = self.spec.get("inputs") or {}
        if self.spec.get("inputs_exact") and found["inputs"] != wanted_inputs:
            return False
        if any(found["inputs"].get(k) != v for k, v in wanted_inputs.items()):
            return False
        return all(found.get(k) == self.spec[k]
                   for k in ("slot", "parent_component_id", "parent_uuid") if k in self.spec)


# ---------------------------------------------------------------------------- whole trees

Node = dict[str, Any]  # {component_id, inputs, uuid?, slots: {slot: [Node]}}


def found_nodes(tree: CanvasTree) -> list[Node]:
    """The tree's items as nested nodes: roots, each with its children by slot, in tree order."""
    nodes: dict[str, Node] = {
        item.uuid: {"uuid": item.uuid, "component_id": item.component_id,
                    "inputs": item.inputs, "slots": {}} for item in tree.components}
    roots: list[Node] = []
    for item in tree.components:
        parent = nodes.get(item.parent_uuid or "")
        if parent is None:
            # A child whose parent is gone renders nowhere; it is kept, as an orphan at the
            # root, so a tree with one fails to match rather than hiding it.
            roots.append(nodes[item.uuid] if item.parent_uuid is None
                         else {**nodes[item.uuid], "orphan_of": item.parent_uuid})
            continue
        parent["slots"].setdefault(item.slot or "", []).append(nodes[item.uuid])
    return roots


def _node_matches(want: Node, got: Node, ordered: bool = False) -> bool:
    if want["component_id"] != got["component_id"] or "orphan_of" in got:
        return False
    if "uuid" in want and want["uuid"] != got["uuid"]:
        return False
    if _canonical(want.get("inputs") or {}) != _canonical(got.get("inputs") or {}):
        return False
    wanted_slots = want.get("slots") or {}
    got_slots = got.get("slots") or {}
    if set(wanted_slots) != {s for s, children in got_slots.items() if children}:
        return False
    return all(siblings_match(wanted_slots[s], got_slots.get(s, []), ordered)
               for s in wanted_slots)


def siblings_match(wanted: Sequence[Node], got: Sequence[Node], ordered: bool = False) -> bool:
    """Every wanted node matches one got node and none is left over: siblings in any order, or
    with ``ordered`` in the listed order (a tree renders a slot's siblings in its stored order,
    so "after the menu" is the order of the list)."""
    if len(wanted) != len(got):
        return False
    if ordered:
        return all(_node_matches(w, g, True) for w, g in zip(wanted, got, strict=True))
    return _assign(list(wanted), list(got))


def _assign(wanted: list[Node], got: list[Node]) -> bool:
    if not wanted:
        return True
    first, rest = wanted[0], wanted[1:]
    for index, candidate in enumerate(got):
        if _node_matches(first, candidate) and _assign(rest, got[:index] + got[index + 1:]):
            return True
    return False


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _walk(nodes: Sequence[Node], parent: str = "") -> Iterator[tuple[str, Node]]:
    for node in nodes:
        yield parent, node
        for slot, children in (node.get("slots") or {}).items():
            yield from _walk(children, f"{parent}{node['component_id']}[{slot}] > ")


def _label(parent: str, node: Node) -> str:
    return f"{parent}{node['component_id']} {_canonical(node.get('inputs') or {})}"


def tree_difference(wanted: Sequence[Node], got: Sequence[Node]) -> list[str]:
    """What a reader needs to see: the wanted components nowhere found as wanted, the found
    ones nobody wanted (each with its parent path and inputs)."""
    want_labels = Counter(_label(p, n) for p, n in _walk(wanted))
    got_labels = Counter(_label(p, n) for p, n in _walk(got))
    missing = sorted((want_labels - got_labels).elements())
    extra = sorted((got_labels - want_labels).elements())
    return [f"missing: {m}" for m in missing] + [f"unexpected: {e}" for e in extra]


def _strip(nodes: Sequence[Node]) -> list[Node]:
    """Found nodes in the shape a check lists (no uuid), for the result's ``found``."""
    return [{"component_id": n["component_id"], "inputs": n.get("inputs") or {},
             **({"slots": {s: _strip(c) for s, c in n["slots"].items()}} if n.get("slots") else {})}
            for n in nodes]


@check_type("canvas_tree")
class CanvasTreeCheck(_OnTree):
    """The whole tree equals ``components``: every component, its inputs exactly, its slot and
    parent; siblings in any order, or in the listed order with ``ordered``; a listed ``uuid``
    must be kept. The region must be enabled (a page published) unless ``status`` says
    otherwise."""

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        wanted: list[Node] = list(self.spec["components"])
        status = bool(self.spec.get("status", True))
        expected = {"status": status, "components": wanted}
        tree = self._tree(answer)
        if tree is None:
            return self._absent(expected)
        got = found_nodes(tree)
        found = {"status": tree.status, "components": _strip(got)}
        problems = []
        if tree.status != status:
            state = {("region", True): "enabled", ("region", False): "disabled",
                     ("page", True): "published", ("page", False): "unpublished"}
            problems.append(f"the {tree.kind} is {state[(tree.kind, tree.status)]}")
        ordered = bool(self.spec.get("ordered"))
        if not siblings_match(wanted, got, ordered):
            problems += tree_difference(wanted, got) or [
                "the components differ in order, uuid, slot or parent" if ordered
                else "the components differ in uuid, slot or parent"]
        return self.result(not problems, expected, found, "; ".join(problems))
