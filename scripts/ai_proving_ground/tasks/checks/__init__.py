"""State checks: the vocabulary that grades what an agent built, read through the site driver.

Each check type is one small class in a module of this package, listed in
:data:`~.base.CHECK_TYPES` and imported when a task uses it. Before evaluation every check adds
what it needs to one :class:`~.base.QueryPlan`, so a grade costs a single driver round trip
however many checks a task has.
"""

from ai_proving_ground.tasks.checks.base import (
    CHECK_TYPES,
    MISSING,
    Check,
    CheckContext,
    CheckResult,
    QueryPlan,
    build_checks,
    check_class,
    check_type,
    dig,
    run_checks,
)
from ai_proving_ground.tasks.checks.state import same_stored

__all__ = ["CHECK_TYPES", "MISSING", "Check", "CheckContext", "CheckResult", "QueryPlan",
           "build_checks", "check_class", "check_type", "dig", "run_checks", "same_stored"]
