"""The source options of archive-spanning reads: ``archive`` and ``archivePath``.

``archive=true`` makes a read reach back into each topic's Delta archive
(:mod:`spark_ext.archive_reader`); ``archivePath`` names the table, else
each topic's ``spate.archive.path`` config does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping


@dataclass(frozen=True)
class ArchiveReadOptions:
    """``archive`` and ``archivePath``: where a read finds each topic's archive."""

    path: str | None = None  # None: each topic's spate.archive.path


def parse_archive_options(
    opts: Mapping[str, str], error: Callable[[str, str], Exception]
) -> ArchiveReadOptions | None:
    """The archive options of lower-cased source options; None when ``archive`` is off.

    ``error(option, message)`` builds the exception a bad one raises.
    """
    enabled = opts.get("archive", "false").strip().lower()
    if enabled not in ("true", "false"):
        raise error("archive", f"must be true or false, not {opts['archive']!r}")
    path = opts.get("archivepath")
    if enabled == "false":
        if path is not None:
            raise error("archivePath", "applies only with option archive=true")
        return None
    if path is not None and not path.strip():
        raise error("archivePath", "must name a Delta table (a path or a URI)")
    return ArchiveReadOptions(path.strip() if path else None)
