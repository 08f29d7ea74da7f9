"""Executors: where a campaign's attempts run (submit, collect, cancel), chosen by name."""
