"""Site failures an agent can cause are tokens, never tracebacks: a read-only bed (what an
agent's read-only sandbox gives it) and a database another command holds locked."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest
from cli_kit import NEEDS_BWRAP, bwrap_works

from ai_proving_ground.layout import BedLayout
from ai_proving_ground.sites.embedded.store import database_error
from ai_proving_ground.tasks.run import site_command


@pytest.mark.skipif(not bwrap_works(), reason=NEEDS_BWRAP)
def test_a_read_only_bed_is_a_token(bed: Path) -> None:
    # The bed mounted read-only, as an agent's read-only sandbox sees it (root ignores modes).
    site = [*site_command(bed), "--approot", str(bed)]
    wrap = ["bwrap", "--bind", "/", "/", "--ro-bind", str(bed), str(bed), "--dev", "/dev",
            "--proc", "/proc"]
    read = subprocess.run([*wrap, *site, "config:get", "system.site", "name"],
                          capture_output=True, text=True)
    assert read.returncode == 0, read.stderr
    write = subprocess.run([*wrap, *site, "config:set", "system.site", "name", "Changed"],
                           capture_output=True, text=True)
    assert write.returncode == 1
    assert write.stderr.startswith("APG_SITE_READONLY the site database ")
    assert "Traceback" not in write.stderr and "workspace-write" in write.stderr


def test_a_locked_database_is_a_token(bed: Path) -> None:
    database = BedLayout(bed).database
    holder = sqlite3.connect(database, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        writer = sqlite3.connect(database, timeout=0)
        with pytest.raises(sqlite3.OperationalError) as caught:
            writer.execute("INSERT INTO cache (cid, data) VALUES ('x', 'y')")
        writer.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    error = database_error(caught.value, database)
    assert error.token == "APG_SITE_BUSY" and str(database) in error.message
    assert "run this one again" in error.message
