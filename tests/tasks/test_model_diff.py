"""``model.diff`` made in-process: a patch git applies to the tag to give the bed's tracked paths,
naming the files git's own diff names, and empty for a bed just reset."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ai_proving_ground.baselines.tree import read_tree
from ai_proving_ground.errors import ApgError
from ai_proving_ground.gitutil import git
from ai_proving_ground.tasks.model_diff import model_diff

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git (apt-get install git)")

TAG = "apg-baseline-test"
MODULE = "web/modules/custom/mine"
LONG = "".join(f"line {n}\n" for n in range(40))


def write(bed: Path, relative: str, data: bytes, mode: int = 0o644) -> None:
    path = bed / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    path.chmod(mode)


def tagged_bed(bed: Path) -> Path:
    write(bed, "config/sync/system.site.yml", b"name: Site\nslogan: ''\n")
    write(bed, f"{MODULE}/long.txt", LONG.encode())
    write(bed, f"{MODULE}/gone.txt", b"to be removed\n")
    write(bed, f"{MODULE}/run.sh", b"#!/bin/sh\necho hi\n")
    write(bed, f"{MODULE}/flip.sh", b"#!/bin/sh\n")
    write(bed, f"{MODULE}/image.bin", b"\x89PNG\0\0\x01" * 50)
    write(bed, f"{MODULE}/becomes_link.txt", b"a file first\n")
    write(bed, f"{MODULE}/empty.txt", b"")
    os.symlink("long.txt", bed / MODULE / "link")
    write(bed, "recipes/r/recipe.yml", b"name: r")  # no newline at the end
    write(bed, "outside.txt", b"not tracked by reset\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "base"],
                 ["tag", TAG]):
        git(bed, args)
    return bed


def change(bed: Path) -> None:
    write(bed, f"{MODULE}/long.txt", LONG.replace("line 20\n", "line twenty\n").encode())
    (bed / MODULE / "gone.txt").unlink()
    (bed / MODULE / "run.sh").chmod(0o755)  # the mode only
    write(bed, f"{MODULE}/flip.sh", b"#!/bin/sh\nexit 0\n", 0o755)  # mode and content
    write(bed, f"{MODULE}/image.bin", b"\x89PNG\0\0\x02" * 60)
    (bed / MODULE / "becomes_link.txt").unlink()
    os.symlink("long.txt", bed / MODULE / "becomes_link.txt")
    (bed / MODULE / "empty.txt").unlink()
    os.unlink(bed / MODULE / "link")
    os.symlink("run.sh", bed / MODULE / "link")
    write(bed, "recipes/r/recipe.yml", b"name: r\r\ndescription: s")  # a lone CR, still no newline
    write(bed, "config/sync/new.yml", b"new: true\n")
    write(bed, "config/sync/new_empty.yml", b"")
    write(bed, f"{MODULE}/new.bin", b"\0\1\2" * 1000)
    write(bed, "outside.txt", b"changed, but not a tracked path\n")


def tracked_files(root: Path) -> dict[str, tuple[str, bytes]]:
    found = {}
    for top in ("config/sync", "web/modules/custom", "recipes"):
        for path in sorted((root / top).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path).encode())
            elif path.is_file():
                found[relative] = (oct(path.stat().st_mode & 0o100), path.read_bytes())
    return found


def test_git_applies_the_diff_to_the_tag_and_gets_the_bed(tmp_path: Path) -> None:
    bed = tagged_bed(tmp_path / "bed")
    tree = read_tree(bed, TAG)
    assert model_diff(bed, tree) == b""  # the bed is the tag's
    change(bed)
    diff = model_diff(bed, tree)
    patch = tmp_path / "model.diff"
    patch.write_bytes(diff)
    copy = tmp_path / "copy"
    # gitutil allows no transport, so no clone: the repository copied, the tag checked out.
    copy.mkdir()
    shutil.copytree(bed / ".git", copy / ".git")
    git(copy, ["checkout", "-q", "-f", f"refs/tags/{TAG}"])
    git(copy, ["apply", "--whitespace=nowarn", str(patch)])
    assert tracked_files(copy) == tracked_files(bed)
    assert b"outside.txt" not in diff
    assert b"GIT binary patch" in diff and b"\\ No newline at end of file" in diff


def test_it_names_what_git_names_and_what_an_ignore_rule_would_hide(tmp_path: Path) -> None:
    bed = tagged_bed(tmp_path / "bed")
    tree = read_tree(bed, TAG)
    change(bed)
    write(bed, ".gitignore", b"*.hidden\n")
    write(bed, f"{MODULE}/work.hidden", b"the model's, ignored by git\n")
    index = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    git(bed, ["read-tree", f"refs/tags/{TAG}"], env=index)
    git(bed, ["add", "-A", "--", "config/sync", "web/modules/custom", "recipes"], env=index)
    names = git(bed, ["diff", "--cached", "--no-renames", "--name-only", f"refs/tags/{TAG}"],
                env=index).stdout.decode().split()
    ours = [line.split(" b/")[-1] for line in model_diff(bed, tree).decode(errors="replace")
            .splitlines() if line.startswith("diff --git ")]
    # reset restores ignored files too, so the diff names them: nothing in the bed hides work
    assert sorted(set(ours)) == sorted([*names, f"{MODULE}/work.hidden"])


def test_a_symlink_above_a_tracked_path_is_refused_not_followed(tmp_path: Path) -> None:
    bed = tagged_bed(tmp_path / "bed")
    tree = read_tree(bed, TAG)
    outside = tmp_path / "outside" / "custom"
    write(outside.parent, "custom/secret.txt", b"not the bed's\n")
    shutil.rmtree(bed / "web" / "modules")
    os.symlink(outside.parent, bed / "web" / "modules")
    with pytest.raises(ApgError) as caught:
        model_diff(bed, tree)
    assert caught.value.token == "APG_MODEL_DIFF_UNSAFE"
    assert "web/modules is a symlink" in caught.value.message
