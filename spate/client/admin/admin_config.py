"""The admin client's settings: the shared client settings and the default timeout of its calls."""

from __future__ import annotations

from dataclasses import dataclass

from spate.client.config import ClientConfig


@dataclass(frozen=True, slots=True)
class AdminConfig(ClientConfig):
    """Every setting ``Admin(...)`` takes by keyword, with Kafka's names and defaults.

    ``default_api_timeout_ms`` bounds each call that is given no ``timeout_ms`` of its own.
    """

    client_id: str = "spate-admin"
    default_api_timeout_ms: int = 60_000

    @property
    def default_api_timeout(self) -> float:
        return self.default_api_timeout_ms / 1000
