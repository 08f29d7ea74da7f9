"""Confinement for agent adapters: bubblewrap, else Landlock, else a refusal (or an explicit opt-out)."""
