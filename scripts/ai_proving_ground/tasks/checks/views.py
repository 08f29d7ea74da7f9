"""Checks that execute what a visitor gets: a view display's rows, and the page at a path.

Rows are judged in the order the task defines. Where the task's own (reference) sort ties, the
check lists the tied rows as one group, ``[a, b]``, whose order is the database's and is not
judged; nowhere else is an order excused, whatever the agent's view sorts on. A view that does
not sort (or sorts on a key where every row ties) is judged like any other.
"""

from __future__ import annotations

from typing import Any

from ai_proving_ground.sites.base import PageQuery, PageResult, StateAnswer, ViewQuery, ViewRow
from ai_proving_ground.tasks.checks.base import (
    Check,
    CheckContext,
    CheckResult,
    QueryPlan,
    check_type,
)

SERVED = ("rows", "entity")  # the outcomes in which a visitor gets a page


def flat_rows(expected: list[Any]) -> list[str]:
    """The expected rows with the task's tie groups opened: ``[a, [b, c]]`` is ``a, b, c``."""
    return [str(r) for item in expected for r in (item if isinstance(item, list) else [item])]


def rows_match(found: list[str], expected: list[Any]) -> bool:
    """``found`` lists ``expected`` in order, each tie group as a set in its place."""
    if len(found) != len(flat_rows(expected)):
        return False
    position = 0
    for item in expected:
        group = [str(r) for r in item] if isinstance(item, list) else [str(item)]
        if sorted(found[position:position + len(group)]) != sorted(group):
            return False
        position += len(group)
    return True


def row_keys(rows: tuple[ViewRow, ...], key: str) -> list[str]:
    return [row.uuid if key == "uuid" else row.label for row in rows]


def judge_rows(found: list[str], expected: list[Any], where: str) -> tuple[bool, str]:
    """(passed, why) for rows a visitor of ``where`` got."""
    flat = flat_rows(expected)
    if found == flat:
        return True, ""
    if rows_match(found, expected):
        return True, "rows the task lists as a sort tie came in another order (not judged)"
    why = ("the same rows in another order" if sorted(found) == sorted(flat)
           else "other rows")
    return False, f"executing {where} gave {why}"


@check_type("view_rows")
class ViewRows(Check):
    """Execute a view display as a visitor asks for it (its contextual ``arguments``, what the
    visitor typed in its ``exposed`` form, the pager's ``page``): the rows must be exactly the
    expected ones, in the task's order, and a visitor must be served them. Input is how a check
    tells an exposed filter from its inverse, and a pager with links from one without."""

    _index = -1

    def plan(self, plan: QueryPlan) -> None:
        exposed = self.spec.get("exposed") or {}
        self._index = plan.add(plan.views, ViewQuery(
            self.spec["view"], self.spec.get("display", "default"),
            tuple(str(a) for a in self.spec.get("arguments") or ()),
            tuple(sorted((str(k), str(v)) for k, v in exposed.items())),
            int(self.spec.get("page", 0))))

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        view = answer.views[self._index]
        expected = list(self.spec["rows"])
        if view.error:
            return self.result(False, expected, None, f"the view did not execute: {view.error}")
        found = row_keys(view.rows, self.spec.get("match", "uuid"))
        # What explains wrong rows: handlers Drupal broke, and filters its validate() rejects.
        notes = [f"Broken handler: {h}" for h in view.broken] + [
            m for m in view.messages if "on filter:" in m]
        where = f"{view.view_id}/{view.display_id}"
        if view.outcome != "rows":
            return self.result(False, expected, found, "; ".join(
                [f"a visitor of {where} gets {view.outcome}", *notes]))
        passed, why = judge_rows(found, expected, where)
        return self.result(passed, expected, found, "; ".join([why, *notes] if not passed
                                                               else [why] if why else []))


@check_type("page_served")
class PageServed(Check):
    """What an anonymous visitor of ``path`` gets: exactly one route claims it, the one the task
    names (a view's page display, or an entity by UUID), it is served, and, when ``rows`` are
    given, it lists them in the task's order. A second view on the same path fails the check:
    which of two routes a visitor gets is the router's choice, not the build's."""

    _index = -1

    def plan(self, plan: QueryPlan) -> None:
        self._index = plan.add(plan.pages, PageQuery(str(self.spec["path"])))

    def _expected_claim(self) -> str:
        if "view" in self.spec:
            return f"view:{self.spec['view']}/{self.spec.get('display', 'page_1')}"
        return f"{self.spec['entity_type']}:{self.spec['uuid']}"

    def _expected(self) -> dict[str, Any]:
        expected: dict[str, Any] = {"claims": [self._expected_claim()],
                                    "served": self._expected_claim()}
        if "rows" in self.spec:
            expected["rows"] = list(self.spec["rows"])
        return expected

    @staticmethod
    def _found(page: PageResult, key: str) -> dict[str, Any]:
        return {"claims": list(page.claims), "served": page.served, "outcome": page.outcome,
                "rows": row_keys(page.rows, key)}

    def evaluate(self, answer: StateAnswer, context: CheckContext) -> CheckResult:
        page = answer.pages[self._index]
        expected, found = self._expected(), self._found(page, self.spec.get("match", "uuid"))
        claim = self._expected_claim()
        if page.served is None:
            return self.result(False, expected, found, f"nothing is served at {page.path} "
                                                       f"(a visitor gets {page.outcome})")
        if page.served != claim:
            return self.result(False, expected, found,
                               f"a visitor of {page.path} gets {page.served}, not {claim}")
        if len(page.claims) > 1:
            others = ", ".join(c for c in page.claims if c != claim)
            return self.result(False, expected, found,
                               f"{page.path} is also claimed by {others}")
        if page.outcome not in SERVED:
            detail = f" ({page.error})" if page.error else ""
            return self.result(False, expected, found,
                               f"a visitor of {page.path} gets {page.outcome}{detail}")
        if "rows" not in self.spec:
            return self.result(True, expected, found)
        passed, why = judge_rows(found["rows"], list(self.spec["rows"]), f"the page {page.path}")
        return self.result(passed, expected, found, why)
