"""``apg where``: the shipped files' places, printed as a shell wants them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_proving_ground.cli import where
from ai_proving_ground.paths import PROJECT_ROOT


def test_each_name_prints_its_place(capsys: pytest.CaptureFixture[str]) -> None:
    assert where.main(["ddev"]) == 0
    addon = Path(capsys.readouterr().out.strip())
    assert addon == PROJECT_ROOT / "ddev" and (addon / "install.yaml").is_file()
    assert where.main(["escrow-verifier"]) == 0
    assert Path(capsys.readouterr().out.strip()).name == "escrow_verify.py"
    assert where.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(" ", 1)[0] for line in lines] == list(where.NAMES)
    assert all(Path(line.split(" ", 1)[1]).exists() for line in lines)


def test_an_unknown_name_lists_the_names(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        where.main(["nope"])
    assert exited.value.code == 2
    assert "APG_USAGE" in capsys.readouterr().err
