"""Baselines: capture and restore of a bed's known state."""
