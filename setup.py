"""Build step: the wheel carries the project's shipped folders inside the package.

The repository keeps recipes/, fixtures/, datasets/, campaigns/, ddev/ and skills/ at its top level (the
design fixes that layout). A built package holds copies of them, and of the escrow verifier, in
``ai_proving_ground/_data/`` with the same layout, where ``ai_proving_ground.paths`` finds them
through importlib.resources. An editable install reads the checkout's folders in place.
Everything else about the build is in pyproject.toml.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
# skills/: the catalog campaigns/views_skill.yml installs (its arms name it as ../skills).
SHIPPED = ("recipes", "fixtures", "datasets", "campaigns", "ddev", "skills",
           "scripts/escrow_verify.py")


class BuildWithShippedFiles(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "ai_proving_ground" / "_data"
        for name in SHIPPED:
            source = HERE / name
            if source.is_dir():
                # copy_tree keeps the executable bit the adapters and host commands need.
                self.copy_tree(str(source), str(target / name))
            else:
                self.mkpath(str((target / name).parent))
                self.copy_file(str(source), str(target / name))


setup(cmdclass={"build_py": BuildWithShippedFiles})
