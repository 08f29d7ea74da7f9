"""Where an Inspect eval's per-sample beds come from: a given template, or one made per set.

Each sample gets a fresh copy of its template, reset through the library, so samples running in
parallel never share a bed. A given template must hold the baseline of every fixture set its
samples need (a bed keeps one baseline per set: ``apg provision --approot T NAMES`` per set); a
sample whose set it lacks is refused before any copy is made, with the command that captures it.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
import threading
import weakref
from pathlib import Path

from ai_proving_ground.baselines.provision import provision
from ai_proving_ground.baselines.reset import require_baseline, reset
from ai_proving_ground.bed import clone_bed, init_bed
from ai_proving_ground.errors import ApgError
from ai_proving_ground.settings import Settings
from ai_proving_ground.sites.embedded.driver import EmbeddedSite


class SampleBeds:
    """Where the per-sample beds come from: a given template, or one made per fixture set."""

    def __init__(self, template: Path | None, work_dir: Path | None, settings: Settings) -> None:
        self.template = template
        self.settings = settings
        self.work_dir = work_dir
        self._root: Path | None = None
        self._templates: dict[tuple[str, ...], Path] = {}
        self._checked: set[tuple[str, ...]] = set()  # fixture sets the given template holds
        self._lock = threading.Lock()

    @property
    def ephemeral(self) -> bool:
        return self.work_dir is None

    def root(self) -> Path:
        with self._lock:
            if self._root is None:
                if self.work_dir is not None:
                    self.work_dir.mkdir(parents=True, exist_ok=True)
                    self._root = Path(tempfile.mkdtemp(prefix="apg-inspect-", dir=self.work_dir))
                else:
                    self._root = Path(tempfile.mkdtemp(prefix="apg-inspect-"))
                    weakref.finalize(self, shutil.rmtree, self._root, True)
            return self._root

    def template_for(self, fixtures: tuple[str, ...]) -> Path:
        if self.template is not None:
            self._check_template(self.template, fixtures)
            return self.template
        root = self.root()
        with self._lock:
            made = self._templates.get(fixtures)
            if made is None:
                made = root / "templates" / f"set-{len(self._templates)}"
                init_bed(made, fixtures, self.settings)
                provision(made, fixtures, EmbeddedSite(made), self.settings)
                self._templates[fixtures] = made
            return made

    def _check_template(self, template: Path, fixtures: tuple[str, ...]) -> None:
        """A given template must hold the sample's set's baseline (checked once per set that it
        holds); the refusal names the template and the command that captures the baseline."""
        with self._lock:
            if fixtures in self._checked:
                return
            try:
                require_baseline(template, fixtures, self.settings)
            except ApgError as exc:
                raise ApgError("APG_INSPECT_TEMPLATE_INVALID", f"template {template} cannot serve "
                               f"a sample of fixtures {' '.join(fixtures)}: {exc.message}",
                               exit_code=2) from None
            self._checked.add(fixtures)

    def prepare(self, label: str, fixtures: tuple[str, ...]) -> tuple[Path, list[str]]:
        """A fresh copy of the template, reset by the library and fit to grade."""
        template = self.template_for(fixtures)
        bed = self.root() / "beds" / f"{label}-{secrets.token_hex(4)}"
        clone_bed(template, bed, self.settings)
        outcome = reset(bed, fixtures, EmbeddedSite(bed), self.settings)
        if outcome.failures:
            raise ApgError("APG_INSPECT_BED_UNFIT", f"the bed {bed} copied from {template} is not "
                           f"fit to grade after reset: {', '.join(outcome.failures)}")
        return bed, outcome.warnings
