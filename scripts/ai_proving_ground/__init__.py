"""ai_proving_ground: an eval bed for AI coding agents."""

__version__ = "0.1.0"
