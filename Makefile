# Bootstraps a virtualenv holding nox, then hands every job to nox.
PYTHON ?= python3
VENV := .venv
NOX := $(VENV)/bin/nox

.PHONY: demo test lint bench clean

$(NOX):
	@echo "First run: making $(VENV) with nox in it (quiet pip, about 30 s; once only)..."
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VENV)/bin/python -m pip install --quiet "nox>=2024.4.15"

demo: $(NOX)
	@echo "nox installs apg into its own venv (.nox/demo; the first time about a minute), then runs the demo..."
	$(NOX) -s demo
	@echo "The demo's closing hint names its apg; to put apg on your PATH: pipx install . (README, Install)."

# The tests on the oldest supported Python found, then lint, then the official
# every_eval_ever validators (eee, Python 3.12 or 3.13); NOXFLAGS adds nox options.
test: $(NOX)
	$(NOX) -s tests lint eee $(NOXFLAGS)

lint: $(NOX)
	$(NOX) -s lint

bench: $(NOX)
	$(NOX) -s bench

clean:
	rm -rf $(VENV) .nox build
