"""The site's reported Python version is the one platform reports, without importing it."""

from __future__ import annotations

import platform

from ai_proving_ground.sites.embedded.reads import python_version


def test_python_version_is_platforms() -> None:
    assert python_version() == platform.python_version()
