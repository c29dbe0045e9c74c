"""The controller: ``/controller`` (ephemeral, who) and ``/controller_epoch`` (how many elections).

The broker whose session created ``/controller`` is the controller::

    {"version":2,"brokerid":1,"timestamp":"1700000000000","kraftControllerEpoch":-1}

(``kraftControllerEpoch`` is -1 for a cluster never migrated to KRaft.)
``/controller_epoch`` holds the epoch as bare decimal text; every election
bumps it with a write conditional on its data version, and that version
fences writes made by an older controller.
"""

from __future__ import annotations

from dataclasses import dataclass

from broker_core.cluster.zk.znodes.fields import INT64_MAX, JsonFields, decode_int_text, encode_json

CONTROLLER_VERSION = 2
NO_KRAFT_CONTROLLER_EPOCH = -1


@dataclass(frozen=True)
class ControllerRegistration:
    broker_id: int
    timestamp_ms: int = 0
    kraft_controller_epoch: int = NO_KRAFT_CONTROLLER_EPOCH


class ControllerZNode:
    """``/controller``: the current controller's broker id (ephemeral)."""

    @staticmethod
    def path() -> str:
        return "/controller"

    @staticmethod
    def encode(registration: ControllerRegistration) -> bytes:
        return encode_json(
            {
                "version": CONTROLLER_VERSION,
                "brokerid": registration.broker_id,
                "timestamp": str(registration.timestamp_ms),
                "kraftControllerEpoch": registration.kraft_controller_epoch,
            }
        )

    @staticmethod
    def decode(data: bytes | None) -> ControllerRegistration:
        fields = JsonFields.parse(ControllerZNode.path(), data)
        fields.version()
        return ControllerRegistration(
            broker_id=fields.integer("brokerid"),
            timestamp_ms=fields.long_text("timestamp", minimum=0, maximum=INT64_MAX) if fields.has("timestamp") else 0,
            kraft_controller_epoch=(
                fields.integer("kraftControllerEpoch") if fields.has("kraftControllerEpoch") else NO_KRAFT_CONTROLLER_EPOCH
            ),
        )


class ControllerEpochZNode:
    """``/controller_epoch``: the number of the latest controller election, as decimal text."""

    INITIAL_EPOCH = 0

    @staticmethod
    def path() -> str:
        return "/controller_epoch"

    @staticmethod
    def encode(epoch: int) -> bytes:
        return str(epoch).encode("ascii")

    @staticmethod
    def decode(data: bytes | None) -> int:
        return decode_int_text(ControllerEpochZNode.path(), data)
