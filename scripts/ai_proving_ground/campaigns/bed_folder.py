"""Where a campaign's beds live: checked before anything is written, said at the start, removed at
the end unless kept.

The folder (``--beds``, default a new folder in the system's temporary directory, apart from the
records) holds ``template/`` when the runner makes the template, ``job-<n>/`` per job and the
beds set aside after tampering or a failed reset (``job-<n>.<why>-<order>/``). They are working
copies, several megabytes each, that nothing reads once the report is written (each attempt's
evidence is in its ``runs/<order>/``), so they are removed when the campaign ends, interrupted
or not, unless ``--keep-beds`` keeps them for a look. A ``--beds`` folder the runner found empty
is emptied, never removed; a template the spec names (``bed``) and DDEV projects
(``ddev_beds``) are the operator's and are never touched.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from ai_proving_ground.campaigns import beds
from ai_proving_ground.campaigns.spec import CampaignSpec
from ai_proving_ground.report import say

BEDS_TOKEN = "APG_CAMPAIGN_BEDS"


def check(given: Path | None) -> None:
    """Refuse a ``--beds`` folder that is not new or empty (:class:`beds.CannotRun`), before the
    campaign writes anything: the runner would clone over, and then remove, what is there."""
    if given is None:
        return
    path = given.absolute()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise beds.CannotRun(f"--beds {path} exists and is not empty; pass a new or empty folder "
                             "(the runner removes its beds at the end)")


@dataclass(frozen=True)
class BedFolder:
    """The beds' folder of one campaign run (``path`` None: DDEV projects, used in place)."""

    path: Path | None
    made: bool = False  # the runner made the folder itself, so it removes it whole
    keep: bool = False

    def close(self) -> None:
        """Remove the beds unless kept, and say so; what cannot be removed is named."""
        if self.path is None:
            return
        if self.keep:
            say(BEDS_TOKEN, f"{self.path}: kept (--keep-beds); remove it when done")
            return
        problems: list[str] = []
        targets = [self.path] if self.made else sorted(self.path.iterdir())
        for target in targets:
            try:  # rmtree never follows a link an agent left (it unlinks the link itself)
                shutil.rmtree(target)
            except OSError as exc:
                problems.append(f"{exc.filename or target}: {exc.strerror or exc}")
        if problems:
            say("APG_CAMPAIGN_BEDS_LEFT", f"{self.path}: could not remove {len(problems)} "
                f"path(s), first {problems[0]}; remove the folder by hand")
        else:
            say("APG_CAMPAIGN_BEDS_REMOVED", str(self.path))


def open_folder(spec: CampaignSpec, given: Path | None, keep: bool) -> BedFolder:
    """The beds' folder for this run, made when needed, and where it is said on stderr."""
    if spec.ddev_beds:
        say(BEDS_TOKEN, f"the DDEV projects of ddev_beds, used in place and never removed: "
            f"{', '.join(str(p) for p in spec.ddev_beds)}")
        return BedFolder(None)
    if given is None:
        folder = BedFolder(beds.default_beds_dir(spec.name).absolute(), made=True, keep=keep)
    else:
        path = given.absolute()
        folder = BedFolder(path, made=not path.exists(), keep=keep)
        path.mkdir(parents=True, exist_ok=True)
    what = "one bed per job" if spec.bed else "the template and one bed per job"
    fate = "kept at the end (--keep-beds)" if keep else "removed at the end (--keep-beds keeps them)"
    say(BEDS_TOKEN, f"{folder.path}: {what}, {fate}")
    return folder
