"""A bed's repository cannot steer the git the harness runs (issue 18).

Each case plants, in a bed's ``.git`` (and where a key needs one, a ``.gitattributes``), one class
of setting that makes git run a program: a script that would leave a marker file. Then the bed
goes through everything that runs git: a recapture (provision with the dump and tag gone), escrow,
``apg verify``, ``apg verify --restore`` with the tag deleted, and ``apg reset`` with the tag
deleted, then moved. Every step must end in a restore or a refusal with a token, and no marker
may exist. Real git throughout; the first test shows the planted transport really runs with git
as a bed's own config steers it, so these tests can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from escrow_kit import ApgRunner, Escrowed, clean_environ

from ai_proving_ground.baselines.store import Baseline, read_metadata
from ai_proving_ground.baselines.tree import head_commit, repository_changes, tag_commit
from ai_proving_ground.fixtures import DEFAULT_FIXTURES, load_set
from ai_proving_ground.gitutil import bed_git, git, write_ref
from ai_proving_ground.settings import Settings

Plant = Callable[[Path, Path], None]  # (bed, the marker-writing script)

HOOKS = ("reference-transaction", "pre-commit", "post-commit", "post-checkout", "post-merge",
         "post-index-change", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "pre-push")


def _config(text: str) -> Plant:
    def plant(bed: Path, evil: Path) -> None:
        with (bed / ".git" / "config").open("a") as handle:
            handle.write(text.replace("EVIL", str(evil)))
    return plant


def _with_attributes(text: str) -> Plant:
    """The config, and every file assigned the drivers it defines (worktree and info/)."""
    config = _config(text)

    def plant(bed: Path, evil: Path) -> None:
        config(bed, evil)
        rules = "* filter=evil diff=evil merge=evil\n"
        (bed / ".gitattributes").write_text(rules)
        (bed / ".git" / "info").mkdir(exist_ok=True)
        (bed / ".git" / "info" / "attributes").write_text(rules)
        for tracked in (bed / "config" / "sync").iterdir():  # stat-dirty: status must look inside
            os.utime(tracked, (1, 1))
    return plant


def _hooks(bed: Path, evil: Path) -> None:
    hooks = bed / ".git" / "hooks"
    other = bed.parent / "other-hooks"
    for folder in (hooks, other):
        folder.mkdir(exist_ok=True)
        for name in HOOKS:
            (folder / name).write_text(f"#!/bin/sh\nexec {evil}\n")
            (folder / name).chmod(0o755)
    _config(f"[core]\n\thooksPath = {other}\n")(bed, evil)


def _includes(bed: Path, evil: Path) -> None:
    included = bed.parent / "included.config"
    included.write_text(f"[core]\n\tfsmonitor = {evil}\n\tpager = {evil}\n"
                        f"[alias]\n\tstatus = !{evil}\n")
    _config(f"[include]\n\tpath = {included}\n[includeIf \"gitdir:/\"]\n\tpath = {included}\n"
            )(bed, evil)


def _worktree(bed: Path, evil: Path) -> None:
    elsewhere = bed.parent / "elsewhere"
    (elsewhere / "config" / "sync").mkdir(parents=True)
    (elsewhere / "config" / "sync" / "planted.yml").write_text("planted: true\n")
    _config(f"[core]\n\tworktree = {elsewhere}\n\tfsmonitor = {evil}\n")(bed, evil)


KEY_CLASSES: dict[str, Plant] = {
    "transport-ext-insteadof": _config(
        "[protocol \"ext\"]\n\tallow = always\n[protocol]\n\tallow = always\n"
        # the rest of the URL becomes the script's argument (the space inside the quotes)
        "[url \"ext::EVIL \"]\n\tinsteadOf = /\n\tinsteadOf = file://\n\tpushInsteadOf = /\n"),
    "remote-uploadpack-receivepack": _config(
        "[remote \"origin\"]\n\turl = /nonexistent\n\tuploadpack = EVIL\n\treceivepack = EVIL\n"
        "[core]\n\talternateRefsCommand = EVIL\n"),
    "ssh-proxy": _config("[core]\n\tsshCommand = EVIL\n\tgitProxy = EVIL\n"
                         "[url \"ssh://x/\"]\n\tinsteadOf = /\n"),
    "askpass-credential": _config("[core]\n\taskPass = EVIL\n[credential]\n\thelper = !EVIL\n"),
    "editor": _config("[core]\n\teditor = EVIL\n[sequence]\n\teditor = EVIL\n"
                      "[tag]\n\tgpgSign = true\n\tforceSignAnnotated = true\n"),
    "signing": _config("[gpg]\n\tprogram = EVIL\n[gpg \"openpgp\"]\n\tprogram = EVIL\n"
                       "[gpg \"ssh\"]\n\tprogram = EVIL\n[gpg \"x509\"]\n\tprogram = EVIL\n"
                       "[tag]\n\tgpgSign = true\n[commit]\n\tgpgSign = true\n"),
    "hooks": _hooks,
    "fsmonitor": _config("[core]\n\tfsmonitor = EVIL\n\tuntrackedCache = true\n"),
    "filter-drivers": _with_attributes(
        "[filter \"evil\"]\n\tclean = EVIL\n\tsmudge = EVIL\n\tprocess = EVIL\n\trequired = true\n"),
    "diff-drivers": _with_attributes(
        "[diff \"evil\"]\n\ttextconv = EVIL\n\tcommand = EVIL\n[diff]\n\texternal = EVIL\n"),
    "merge-drivers": _with_attributes("[merge \"evil\"]\n\tdriver = EVIL\n"),
    "pager": _config("[core]\n\tpager = EVIL\n[pager]\n\tstatus = EVIL\n\ttag = EVIL\n"
                     "\tls-files = EVIL\n\tbundle = EVIL\n"),
    "shell-aliases": _config("[alias]\n\tstatus = !EVIL\n\ttag = !EVIL\n\tfetch = !EVIL\n"
                             "\tbundle = !EVIL\n\tls-files = !EVIL\n\tcat-file = !EVIL\n"),
    "include": _includes,
    "worktree": _worktree,
    "uploadpack-hook": _config("[uploadpack]\n\tpackObjectsHook = EVIL\n"),
}


def _evil(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "MARKER"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 1\n")
    script.chmod(0o755)
    return script, marker


def _delete_tag(bed: Path, tag: str) -> None:
    """As an agent would, without any git (a loose ref file; the harness writes loose refs)."""
    (bed / ".git" / "refs" / "tags" / tag).unlink()


def _baseline(bed: Path) -> Baseline:
    settings = Settings.from_environ()
    return Baseline.of(bed, load_set(list(DEFAULT_FIXTURES), bed, settings=settings).key, settings)


def test_the_planted_transport_really_runs_under_a_git_steered_by_the_bed(
        escrowed: Escrowed, tmp_path: Path) -> None:
    """The attack of issue 18, first against git as the old verifier ran it (in the bed's own
    repository, hooks off), then against the verifier."""
    evil, marker = _evil(tmp_path)
    _delete_tag(escrowed.bed, escrowed.tag)
    KEY_CLASSES["transport-ext-insteadof"](escrowed.bed, evil)
    ref = f"refs/tags/{escrowed.tag}"
    subprocess.run(["git", "-C", str(escrowed.bed), "-c", "core.hooksPath=/dev/null", "-c",
                    "protocol.allow=never", "fetch", "--quiet", "--no-tags",
                    str(escrowed.set_dir / "tag.bundle"), f"+{ref}:{ref}"],
                   env=clean_environ(), capture_output=True, check=False, timeout=60)
    assert marker.exists()  # protocol.allow=never alone did not stop it
    marker.unlink()

    result = escrowed.verify("--restore")
    assert not marker.exists()
    assert "APG_TAMPERED .git/config modified" in result.findings
    assert f"APG_ESCROW_RESTORED tag {escrowed.tag}" in result.lines
    assert result.rc == 1  # tampering is never restored
    assert tag_commit(escrowed.bed, escrowed.tag) == \
        read_metadata(escrowed.baseline).commit


def test_an_editor_really_runs_from_git_tag_as_the_old_helper_ran_it(
        bed: Path, tmp_path: Path) -> None:
    """The other hole of issue 18: tag.gpgSign with core.editor in the bed's config, and
    `git tag -f` (what provision ran) starts the editor despite the old helper's overrides."""
    evil, marker = _evil(tmp_path)
    KEY_CLASSES["editor"](bed, evil)
    old_overrides = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c",
                     "gc.auto=0", "-c", "maintenance.auto=false", "-c", "core.pager=cat"]
    subprocess.run(["git", "-C", str(bed), *old_overrides, "tag", "-f", "probe", "HEAD"],
                   env=clean_environ(), capture_output=True, check=False, timeout=60)
    assert marker.exists()


@pytest.mark.parametrize("key_class", sorted(KEY_CLASSES))
def test_no_planted_setting_runs_and_every_step_restores_or_refuses(
        key_class: str, bed: Path, tmp_path: Path, apg: ApgRunner,
        snapshot_grader: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    evil, marker = _evil(tmp_path)
    monkeypatch.setenv("AI_PG_ESCROW_DIR", str(tmp_path / "escrow"))
    baseline = _baseline(bed)
    baseline.dump.unlink()  # a recapture: dump and tag gone
    _delete_tag(bed, baseline.tag)
    KEY_CLASSES[key_class](bed, evil)

    def step(*argv: str, token: str) -> str:
        done = apg(*argv, "--approot", str(bed))
        assert not marker.exists(), f"{key_class}: {' '.join(argv)} ran the planted program"
        assert done.rc == 0 and token in done.err, done.err
        return str(done.out).strip()

    def verify(*argv: str, token: str) -> None:
        # The verifier as apg verify runs it: the escrowed copy, a child `python3 -I`.
        done = subprocess.run([sys.executable, "-I", str(set_dir / "escrow_verify.py"), str(bed),
                               str(set_dir), *argv], capture_output=True, text=True, timeout=60,
                              env=clean_environ(), check=False)
        assert not marker.exists(), f"{key_class}: verify {' '.join(argv)} ran the planted program"
        assert done.returncode == 0 and token in done.stderr, done.stderr

    step("provision", token="APG_PROVISION_OK")
    recorded = read_metadata(baseline).commit
    assert recorded == head_commit(bed) == tag_commit(bed, baseline.tag)
    set_dir = Path(step("escrow", token=""))
    verify(token="APG_ESCROW_OK")
    step("verify", token="")  # apg verify itself: selection, then the same child
    _delete_tag(bed, baseline.tag)
    verify("--restore", token=f"APG_ESCROW_RESTORED tag {baseline.tag}")
    verify(token="APG_ESCROW_OK")
    _delete_tag(bed, baseline.tag)
    step("reset", token=f"APG_RESET_TAG_RESTORED tag {baseline.tag}")
    assert tag_commit(bed, baseline.tag) == recorded
    assert recorded is not None
    moved = bed_git(bed, ["-c", "user.name=agent", "-c", "user.email=agent@localhost",
                          "commit-tree", f"{recorded}^{{tree}}", "-p", recorded, "-m", "agent"],
                    head=recorded).stdout.decode().strip()
    write_ref(bed, f"refs/tags/{baseline.tag}", moved)
    assert repository_changes(bed, baseline) == \
        [f"tag {baseline.tag} moved to {moved} (baseline commit {recorded})"]
    step("reset", token="APG_RESET_OK")
    assert tag_commit(bed, baseline.tag) == recorded and repository_changes(bed, baseline) == []
    if key_class == "worktree":  # git never worked on the tree core.worktree named
        assert sorted(p.name for p in (bed.parent / "elsewhere" / "config" / "sync").iterdir()) \
            == ["planted.yml"]


def test_a_moved_tag_no_longer_poisons_reset(bed: Path, apg: ApgRunner) -> None:
    """An agent commits planted files and moves the tag onto them: reset restores the recorded
    commit's files and points the tag back at it."""
    baseline = _baseline(bed)
    recorded = read_metadata(baseline).commit
    planted = bed / "web" / "modules" / "custom" / "answers.txt"
    planted.write_text("the answers, for the next attempt\n")
    git(bed, ["add", "-A"])
    git(bed, ["commit", "--quiet", "-m", "notes"])
    git(bed, ["tag", "-f", baseline.tag, "HEAD"])
    assert repository_changes(bed, baseline)[0].startswith(f"tag {baseline.tag} moved to ")
    done = apg("reset", "--approot", str(bed))
    assert done.rc == 0, done.err
    assert f"APG_RESET_TAG_RESTORED tag {baseline.tag}" in done.err
    assert not planted.exists()
    assert tag_commit(bed, baseline.tag) == recorded and repository_changes(bed, baseline) == []


def test_a_deleted_tag_is_a_repository_change(bed: Path) -> None:
    baseline = _baseline(bed)
    assert repository_changes(bed, baseline) == []
    _delete_tag(bed, baseline.tag)
    assert repository_changes(bed, baseline) == [f"tag {baseline.tag} deleted"]


@pytest.mark.parametrize("swap", ["symlink", "gitfile"])
def test_a_repository_git_cannot_be_isolated_in_is_refused(bed: Path, tmp_path: Path, swap: str,
                                                           apg: ApgRunner) -> None:
    """.git replaced by a link to another repository (a symlink, or a gitfile): git refuses it
    (APG_GIT_UNSAFE) instead of reading the other repository's tag and objects; reset, which
    runs no git, replaces it with the snapshot's .git and leaves the other repository alone."""
    baseline = _baseline(bed)
    moved = tmp_path / "real-git"
    (bed / ".git").rename(moved)
    if swap == "symlink":
        (bed / ".git").symlink_to(moved)
    else:
        (bed / ".git").write_text(f"gitdir: {moved}\n")
    assert repository_changes(bed, baseline)[0].startswith(f"{bed}: .git is ")
    before = sorted(p.relative_to(moved).as_posix() for p in moved.rglob("*"))
    done = apg("reset", "--approot", str(bed))
    assert done.rc == 0 and f"APG_RESET_TAG_RESTORED tag {baseline.tag}" in done.err, done.err
    assert (bed / ".git").is_dir() and not (bed / ".git").is_symlink()
    assert repository_changes(bed, baseline) == []
    assert sorted(p.relative_to(moved).as_posix() for p in moved.rglob("*")) == before


def test_config_hooks_and_alternates_are_judging_state(escrowed: Escrowed, tmp_path: Path) -> None:
    """Each change to what steers git is APG_TAMPERED, never restored; objects and the index
    (which an agent's own commits change) are not judged."""
    git_dir = escrowed.bed / ".git"
    assert escrowed.verify().rc == 0
    with (git_dir / "config").open("a") as handle:
        handle.write("[core]\n\tfsmonitor = /bin/true\n")
    (git_dir / "hooks" / "post-checkout").write_text("#!/bin/sh\n")
    (git_dir / "info").mkdir(exist_ok=True)
    (git_dir / "info" / "attributes").write_text("* filter=x\n")
    (git_dir / "objects" / "info").mkdir(exist_ok=True)
    (git_dir / "objects" / "info" / "alternates").write_text(f"{tmp_path}\n")
    (git_dir / "commondir").write_text("..\n")
    result = escrowed.verify("--restore")
    tampered = sorted(line for line in result.findings if line.startswith("APG_TAMPERED"))
    assert tampered == ["APG_TAMPERED .git/commondir added", "APG_TAMPERED .git/config modified",
                        "APG_TAMPERED .git/hooks/post-checkout added",
                        "APG_TAMPERED .git/info/attributes added",
                        "APG_TAMPERED .git/objects/info/alternates added"]
    assert result.rc == 1
    assert "fsmonitor" in (git_dir / "config").read_text()  # never restored


def test_an_agent_commit_is_not_tampering(escrowed: Escrowed) -> None:
    (escrowed.bed / "config" / "sync" / "agent.yml").write_text("agent: work\n")
    git(escrowed.bed, ["add", "-A"])
    git(escrowed.bed, ["commit", "--quiet", "-m", "the agent's own commit"])
    result = escrowed.verify()
    assert result.rc == 0, result.err


@pytest.mark.parametrize("kind", ["blob", "tree"])
def test_a_forged_object_is_restored_never_read(bed: Path, apg: ApgRunner, kind: str) -> None:
    """The bed's objects are the agent's to write and git does not check what it reads: a loose
    object rewritten under its old name (a file's content, or a folder's listing) must not be
    what reset restores. Reset reads no object: it puts the object file back from the baseline
    directory's snapshot and the bed's files from their recorded bytes."""
    baseline = _baseline(bed)
    commit = read_metadata(baseline).commit
    assert commit is not None
    site_file = bed / "config" / "sync" / "system.site.yml"
    recorded = site_file.read_bytes()
    spec = f"{commit}:config/sync" if kind == "tree" else f"{commit}:config/sync/system.site.yml"
    sha = bed_git(bed, ["rev-parse", spec]).stdout.decode().strip()
    original = bed_git(bed, ["cat-file", kind, sha]).stdout
    forged = original.replace(b"system.site.yml", b"system.site.ymX") if kind == "tree" else \
        original + b"planted: answers\n"
    loose = bed / ".git" / "objects" / sha[:2] / sha[2:]
    assert loose.is_file()  # a bed made by apg keeps loose objects
    before = loose.read_bytes()
    loose.unlink()
    loose.write_bytes(zlib.compress(f"{kind} {len(forged)}\0".encode() + forged))
    site_file.write_text("name: changed\n")
    done = apg("reset", "--approot", str(bed))
    assert done.rc == 0 and "APG_RESET_OK" in done.err, done.err
    assert loose.read_bytes() == before and site_file.read_bytes() == recorded
    assert bed_git(bed, ["cat-file", kind, sha]).stdout == original



def test_unreadable_metadata_is_refused_not_read_as_unrecorded(bed: Path, apg: ApgRunner) -> None:
    """Broken metadata must not make reset fall back to whatever the (moved) tag names."""
    baseline = _baseline(bed)
    git(bed, ["commit", "--allow-empty", "--quiet", "-m", "the agent's"])
    git(bed, ["tag", "-f", baseline.tag, "HEAD"])
    baseline.metadata.write_text("{ not json")
    done = apg("reset", "--approot", str(bed))
    assert done.rc != 0 and "APG_RECORD_INVALID" in done.err, done.err
    assert tag_commit(bed, baseline.tag) == head_commit(bed)  # nothing was changed


def test_provision_puts_a_deleted_tag_back_instead_of_capturing_the_attempt(
        bed: Path, apg: ApgRunner) -> None:
    """An attempt deletes the tag and changes the site; provision (idempotent, as operators run
    it) must not recapture that state as the baseline."""
    baseline = _baseline(bed)
    dump, metadata = baseline.dump.read_bytes(), baseline.metadata.read_bytes()
    _delete_tag(bed, baseline.tag)
    assert apg("site", "--approot", str(bed), "config:set", "system.site", "name", "agent").rc == 0
    done = apg("provision", "--approot", str(bed))
    assert done.rc == 0 and "APG_PROVISION_TAG_RESTORED" in done.err, done.err
    assert "APG_PROVISION_NOOP" in done.err
    assert baseline.dump.read_bytes() == dump and baseline.metadata.read_bytes() == metadata
    assert tag_commit(bed, baseline.tag) == read_metadata(baseline).commit


def test_the_users_and_the_environments_git_config_are_never_read(
        escrowed: Escrowed, tmp_path: Path, apg: ApgRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    """A HOME and XDG config that name programs, and GIT_CONFIG_* in the environment: git as
    the operator's shell runs it reads them all; the verifier and reset read none."""
    evil, marker = _evil(tmp_path)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text(f"[core]\n\tfsmonitor = {evil}\n")
    (home / ".config" / "git" / "config").write_text(f"[core]\n\tfsmonitor = {evil}\n")
    hostile = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
               "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.fsmonitor",
               "GIT_CONFIG_VALUE_0": str(evil)}
    (escrowed.bed / "config" / "sync" / "system.site.yml").touch()  # status must look at it
    subprocess.run(["git", "-C", str(escrowed.bed), "status", "--porcelain"], capture_output=True,
                   env={**clean_environ(), **hostile}, check=False, timeout=60)
    assert marker.exists()  # git reads them
    marker.unlink()
    _delete_tag(escrowed.bed, escrowed.tag)
    result = escrowed.verify("--restore", **hostile)
    assert result.rc == 0 and f"APG_ESCROW_RESTORED tag {escrowed.tag}" in result.lines, result.err
    for name, value in hostile.items():
        monkeypatch.setenv(name, value)
    _delete_tag(escrowed.bed, escrowed.tag)
    done = apg("reset", "--approot", str(escrowed.bed))
    assert done.rc == 0 and "APG_RESET_TAG_RESTORED" in done.err, done.err
    assert not marker.exists()
