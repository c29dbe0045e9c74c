"""Coordinators: the broker-side owners of consumer groups and transactions.

A coordinator's state lives in an internal compacted topic and its in-memory
view is rebuilt from that topic when this broker becomes leader of one of its
partitions, and dropped when it stops leading it (``leadership_listener``
turns the broker's leadership news into ``on_elected`` / ``on_resigned``).
Coordinator logic is synchronous and runs on the broker's event loop; time
and timers come in through :class:`~broker_core.coordinator.scheduler.Scheduler`.

Coordinators know their topics only through the interfaces in
``internal_topic`` (and ``transaction.txn_markers`` for markers); the
server implements those on the broker's own partitions.
"""
