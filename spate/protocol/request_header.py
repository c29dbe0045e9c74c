"""The decoded request header, apart from its codec so that errors can name the request they refuse."""

from __future__ import annotations

from dataclasses import dataclass

from spate.protocol.api_keys import ApiKey


@dataclass(frozen=True, slots=True)
class RequestHeader:
    """A decoded request header; ``api_key`` stays a plain int for unknown APIs."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    version: int = 1

    @property
    def api_name(self) -> str:
        return ApiKey.name_of(self.api_key)
