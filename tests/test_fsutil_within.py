"""fsutil.is_within, the one containment test: ``path`` is ``root`` or lies under it, as written."""

from __future__ import annotations

import itertools
from pathlib import Path

from ai_proving_ground.fsutil import is_within

PATHS = [Path(p) for p in ("/", "//", "/a", "/a/b", "/a/bc", "/ab", "/a/b/c/d", "//a", "///a",
                           "/a/./b", "a", "a/b", "a/b/c", "b", ".", "", "..", "../a", "a/..",
                           "/a/../b", "/a b/c")]


def test_is_within_is_equality_or_a_parent_as_pure_paths_say() -> None:
    """Parts compared, as pathlib compares parents (no parent objects built; the sandbox's mount
    plan tests every mask against every bind): absolute never under relative, '..' never
    resolved, /a/bc never under /a/b."""
    for path, root in itertools.product(PATHS, PATHS):
        assert is_within(path, root) == (path == root or root in path.parents), (path, root)
    assert is_within(Path("/a/b/c"), Path("/a/b")) and not is_within(Path("/a/bc"), Path("/a/b"))
    assert not is_within(Path("/a/../b"), Path("/b")) and not is_within(Path("/a"), Path("."))
