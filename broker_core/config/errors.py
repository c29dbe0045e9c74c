"""The one error type for configuration that cannot be accepted."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class ConfigError(ValueError):
    """A property file, ``--override`` or topic config that cannot be used.

    The message names what went wrong and where: the key, the offending value,
    what was expected, and the file and line (or ``--override``) it came from.
    The broker maps it to Kafka's INVALID_CONFIG (40) when a client sent it.
    """

    error_code: ClassVar[int] = 40  # INVALID_CONFIG

    def __init__(
        self,
        message: str,
        *,
        key: str | None = None,
        value: str | None = None,
        path: Path | None = None,
        line: int | None = None,
        origin: str | None = None,
    ) -> None:
        self.reason = message
        self.key = key
        self.value = value
        self.path = path
        self.line = line
        self.origin = origin
        super().__init__(_render(message, key=key, value=value, path=path, line=line, origin=origin))


def _render(
    message: str,
    *,
    key: str | None,
    value: str | None,
    path: Path | None,
    line: int | None,
    origin: str | None,
) -> str:
    where = ""
    if path is not None:
        where = f"{path}:{line}: " if line is not None else f"{path}: "
    elif origin is not None:
        where = f"{origin}: "
    what = ""
    if key is not None:
        what = f"{key}={value}: " if value is not None else f"{key}: "
    return f"{where}{what}{message}"
