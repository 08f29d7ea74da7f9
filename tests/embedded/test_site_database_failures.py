"""A busy agent and a broken database: concurrent ``apg site`` commands on one bed run one after
another and lose no write; every database failure an agent can cause is a token, never a
traceback (locked for longer than the wait, read-only, disk full, not a database)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_proving_ground.errors import ApgError
from ai_proving_ground.layout import BedLayout
from ai_proving_ground.sites.embedded import store as store_module
from ai_proving_ground.sites.embedded.store import open_session

WRITERS = 8
Site = Callable[..., Any]  # the `site` fixture: (rc, out, err) of one in-process command


def database(bed: Path) -> Path:
    return BedLayout(bed).database


# Each writer imports everything, waits for the start file so that all of them reach the database
# at the same moment (as an agent's parallel tool calls do), then runs its command ROUNDS times
# in a row ("{round}" in an argument is the round's number).
_AT_THE_SIGNAL = (
    "import os, sys, time\n"
    "from ai_proving_ground.cli.site import main\n"
    "start, rounds, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]\n"
    "while not os.path.exists(start):\n"
    "    time.sleep(0.005)\n"
    "raise SystemExit(max(main([a.replace('{round}', str(r)) for a in argv]) for r in range(rounds)))\n")
ROUNDS = 5


def apg_site(bed: Path, start: Path, *args: str, rounds: int = 1) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _AT_THE_SIGNAL, str(start), str(rounds),
                             "--approot", str(bed), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_concurrent_config_sets_on_one_bed_all_land(bed: Path, tmp_path: Path) -> None:
    start = tmp_path / "start"
    writers = [apg_site(bed, start, "config:set", "system.site", f"busy_{n}_{{round}}", f"value {n}",
                        rounds=ROUNDS) for n in range(WRITERS)]
    start.touch()
    results = [(w.wait(timeout=300), *w.communicate()) for w in writers]
    for rc, _out, err in results:
        assert "Traceback" not in err
        assert (rc, err.splitlines()) == (0, ["APG_SITE_OK [success] Saved system.site."] * ROUNDS)
    reader = apg_site(bed, start, "config:get", "system.site", "--format=json")
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err
    saved = json.loads(out)  # every read-modify-write kept the others' keys
    assert {k: saved[k] for k in saved if k.startswith("busy_")} == {
        f"busy_{n}_{r}": f"value {n}" for n in range(WRITERS) for r in range(ROUNDS)}


def test_a_lock_held_past_the_wait_is_a_token(bed: Path) -> None:
    holder = sqlite3.connect(database(bed), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(ApgError) as caught, open_session(database(bed), busy_timeout_s=0.05):
            pass
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert caught.value.token == "APG_SITE_BUSY"
    assert str(database(bed)) in caught.value.message


@pytest.fixture
def read_only_database(bed: Path) -> Iterator[Path]:
    """The bed's database made read-only for this process: immutable for root (root ignores
    permission bits), mode 0444 for anyone else."""
    path = database(bed)
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True).returncode:
            pytest.skip("needs chattr (e2fsprogs) and a file system with the immutable flag, as root")
        try:
            yield path
        finally:
            subprocess.run([chattr, "-i", str(path)], check=True)
    else:
        path.chmod(0o444)
        yield path
        path.chmod(0o644)


def test_a_read_only_database_refuses_writes_with_a_token_and_still_reads(
        bed: Path, site: Site, read_only_database: Path) -> None:
    result = site(bed, "config:set", "system.site", "name", "changed")
    assert result.rc == 1
    assert result.err.startswith("APG_SITE_READONLY ")
    assert "attempt to write a readonly database" in result.err
    assert "Traceback" not in result.err
    still = site(bed, "config:get", "system.site", "name")
    assert (still.rc, still.out) == (0, "system.site:name: AI proving ground\n")


def test_a_full_disk_is_a_token_and_the_write_is_rolled_back(
        bed: Path, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    connect = sqlite3.connect

    def no_room(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = connect(*args, **kwargs)  # type: ignore[arg-type]
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own "database or disk is full"
        return conn

    monkeypatch.setattr(store_module.sqlite3, "connect", no_room)
    result = site(bed, "config:set", "system.site", "filler", "x" * 200_000)
    assert result.rc == 1
    assert result.err.startswith("APG_SITE_DISK_FULL "), result.err
    monkeypatch.undo()
    after = site(bed, "config:get", "system.site", "filler")
    assert after.rc == 1 and after.err.startswith("APG_CONFIG_MISSING")


def test_a_file_that_is_not_a_database_is_a_token(bed: Path, site: Site) -> None:
    database(bed).write_bytes(b"this is not an SQLite database, it was overwritten" * 100)
    result = site(bed, "status")
    assert result.rc == 1
    assert result.err.startswith("APG_SITE_DB_ERROR "), result.err
    assert "Traceback" not in result.err
