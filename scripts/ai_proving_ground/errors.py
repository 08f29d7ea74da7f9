"""The one exception type for expected failures: a stable token, a message and an exit code."""

from __future__ import annotations


class ApgError(Exception):
    """An expected failure. The CLI prints ``TOKEN message`` on stderr, never a traceback."""

    def __init__(self, token: str, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.token = token
        self.message = message
        self.exit_code = exit_code

    def __str__(self) -> str:
        return f"{self.token} {self.message}"


class UsageError(ApgError):
    """Bad arguments: exit code 2, token APG_USAGE."""

    def __init__(self, message: str) -> None:
        super().__init__("APG_USAGE", message, exit_code=2)
