"""ApiVersions: the table of APIs and versions this broker serves."""

from __future__ import annotations

from typing import Any

from broker_core.server.context import BrokerContext
from spate.protocol.connection import Request
from spate.protocol.messages.api_versions import api_versions_response


def handle(ctx: BrokerContext, request: Request) -> Any:
    return api_versions_response(ctx.versions)
