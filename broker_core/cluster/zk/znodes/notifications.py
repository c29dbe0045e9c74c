"""Notifications to the controller: ISR changes and log dir failures.

ISR change notifications: ``/isr_change_notification/isr_change_<seq>``.

A partition leader that shrinks or expands an ISR writes the new state itself
(a conditional write on the state znode), then leaves a sequential
notification naming the partitions so the controller re-reads them and tells
the other brokers::

    {"version":1,"partitions":[{"topic":"t","partition":0}]}

Log dir event notifications: ``/log_dir_event_notification/log_dir_event_<seq>``.
A broker whose log dir failed leaves one naming itself, and the controller
asks it (with LeaderAndIsr) which of its replicas are still online::

    {"version":1,"broker":1,"event":1}

The controller deletes a notification once it has read it.
"""

from __future__ import annotations

from typing import Iterable

from broker_core.cluster.zk.znodes.admin import decode_topic_partition, encode_topic_partitions
from broker_core.cluster.zk.znodes.fields import JsonFields, encode_json
from broker_core.cluster.zk.znodes.sequential import SequentialZNode
from spate.structs import TopicPartition

ISR_CHANGE_VERSION = 1


class IsrChangeNotificationsZNode:
    """``/isr_change_notification``: the parent of the notifications."""

    @staticmethod
    def path() -> str:
        return "/isr_change_notification"


class IsrChangeNotificationZNode(SequentialZNode):
    """``/isr_change_notification/isr_change_<seq>``: partitions whose ISR changed."""

    PARENT = IsrChangeNotificationsZNode.path()
    PREFIX = "isr_change_"

    @staticmethod
    def encode(partitions: Iterable[TopicPartition]) -> bytes:
        return encode_json({"version": ISR_CHANGE_VERSION, "partitions": encode_topic_partitions(partitions)})

    @staticmethod
    def decode(name: str, data: bytes | None) -> frozenset[TopicPartition]:
        fields = JsonFields.parse(IsrChangeNotificationZNode.path(name), data)
        fields.version()
        return frozenset(decode_topic_partition(entry) for entry in fields.children("partitions"))


LOG_DIR_EVENT_VERSION = 1
LOG_DIR_FAILURE_EVENT = 1


class LogDirEventNotificationsZNode:
    """``/log_dir_event_notification``: the parent of the notifications."""

    @staticmethod
    def path() -> str:
        return "/log_dir_event_notification"


class LogDirEventNotificationZNode(SequentialZNode):
    """``/log_dir_event_notification/log_dir_event_<seq>``: a broker whose log dir failed."""

    PARENT = LogDirEventNotificationsZNode.path()
    PREFIX = "log_dir_event_"

    @staticmethod
    def encode(broker_id: int) -> bytes:
        return encode_json({"version": LOG_DIR_EVENT_VERSION, "broker": broker_id, "event": LOG_DIR_FAILURE_EVENT})

    @staticmethod
    def decode(name: str, data: bytes | None) -> int:
        """The broker the notification names."""
        fields = JsonFields.parse(LogDirEventNotificationZNode.path(name), data)
        fields.version()
        event = fields.integer("event")
        if event != LOG_DIR_FAILURE_EVENT:
            raise fields.fail("event", f"unknown log dir event {event}")
        return fields.integer("broker", minimum=0)
