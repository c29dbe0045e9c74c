"""Errors the CLI reports as one line on stderr instead of a traceback."""

from __future__ import annotations


class CliError(Exception):
    """A user-facing failure; ``exit_code`` is what scripts see."""

    def __init__(self, message: str, exit_code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = exit_code
