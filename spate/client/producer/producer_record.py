"""A record's parts as ``send`` takes them (bytes, str or None; headers as a mapping or pairs) and their size."""

from __future__ import annotations

from typing import Iterable, Mapping

from spate.records.record import Header

HeadersArg = Mapping[str, "bytes | str | None"] | Iterable[tuple[str, "bytes | str | None"]] | None

# Fixed bytes a record adds around its key, value and headers, at most (varints and attributes).
RECORD_OVERHEAD = 21
# The same for one header around its name and value.
_HEADER_OVERHEAD = 10


def as_bytes(data: bytes | bytearray | memoryview | str | None, what: str) -> bytes | None:
    """``data`` as bytes (str as UTF-8); TypeError naming ``what`` for anything else."""
    if data is None or type(data) is bytes:
        return data  # type: ignore[return-value]
    if isinstance(data, str):
        return data.encode("utf-8")
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"{what} must be bytes, str or None, not {type(data).__name__}")


def as_headers(headers: HeadersArg) -> tuple[Header, ...]:
    if not headers:
        return ()
    items = headers.items() if isinstance(headers, Mapping) else headers
    out = []
    for name, value in items:
        if not isinstance(name, str):
            raise TypeError(f"header names must be str, not {type(name).__name__}")
        out.append((name, as_bytes(value, f"header {name!r}")))
    return tuple(out)


def headers_size(headers: tuple[Header, ...]) -> int:
    """Bytes the headers add to a record, at most."""
    return sum(len(name) + len(value or b"") + _HEADER_OVERHEAD for name, value in headers)
