"""Fuzzing the input loaders and the ``apg site`` command line with hypothesis.

Every loader must either load its input or refuse it with an ``ApgError`` (a token and a message
naming the file): any other exception is a traceback a person would see, and fails the test.

Two profiles. ``fuzz-ci`` (what ``make test`` runs): a fixed number of derandomized examples per
target, so the suite takes a few seconds here and gives the same verdict on every machine.
``fuzz-long`` (``nox -s fuzz``): many more random examples, for a person to run now and then.
Neither has a deadline: a slow example is not a failure (no timed assertions).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

_RELAXED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("fuzz-ci", max_examples=40, derandomize=True, deadline=None,
                          database=None, print_blob=True, suppress_health_check=_RELAXED)
settings.register_profile("fuzz-long", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=_RELAXED)
# Hypothesis loads its own "ci" profile when the environment names a CI (the CI variable), and
# that profile keeps the health checks these fixtures trip; only --hypothesis-profile chooses.
if settings.get_current_profile_name() in ("default", "ci"):
    settings.load_profile("fuzz-ci")


@pytest.fixture
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch directory per test (hypothesis reuses it across examples)."""
    return tmp_path_factory.mktemp("fuzz")
