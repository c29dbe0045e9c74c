"""max.connections, max.connections.per.ip and its overrides, counted as Kafka's ConnectionQuotas counts them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError
from broker_core.server.connection_quotas import (
    ConnectionLimits,
    ConnectionQuotas,
    TooManyConnectionsError,
    least_recently_used,
    normalise_address,
)


def quotas(**properties: str) -> ConnectionQuotas:
    return ConnectionQuotas(ConnectionLimits.from_config(BrokerConfig.from_properties(properties)))


def test_a_connection_over_the_per_ip_limit_is_refused_and_not_counted() -> None:
    q = quotas(**{"max.connections.per.ip": "2"})
    q.inc("10.0.0.1")
    q.inc("10.0.0.1")
    with pytest.raises(TooManyConnectionsError, match="too many connections from 10.0.0.1"):
        q.inc("10.0.0.1")
    assert q.count("10.0.0.1") == 2 and q.total == 2
    q.inc("10.0.0.2")
    q.dec("10.0.0.1")
    q.inc("10.0.0.1")
    assert q.total == 3


def test_overrides_set_a_limit_per_host_by_address_or_name() -> None:
    q = quotas(**{"max.connections.per.ip": "1", "max.connections.per.ip.overrides": "127.0.0.1:3, localhost:3,::1:0"})
    for _ in range(3):
        q.inc("127.0.0.1")
    with pytest.raises(TooManyConnectionsError):
        q.inc("127.0.0.1")
    with pytest.raises(TooManyConnectionsError):
        q.inc("::1")
    q.inc("10.0.0.9")
    with pytest.raises(TooManyConnectionsError):
        q.inc("10.0.0.9")


def test_an_ipv4_mapped_address_counts_as_the_ipv4_address() -> None:
    assert normalise_address("::ffff:127.0.0.1") == "127.0.0.1"
    q = quotas(**{"max.connections.per.ip": "1"})
    q.inc("127.0.0.1")
    with pytest.raises(TooManyConnectionsError):
        q.inc("::ffff:127.0.0.1")


def test_a_per_ip_limit_of_zero_needs_overrides() -> None:
    with pytest.raises(ConfigError, match="max.connections.per.ip.overrides.*must be set"):
        quotas(**{"max.connections.per.ip": "0"})
    quotas(**{"max.connections.per.ip": "0", "max.connections.per.ip.overrides": "127.0.0.1:5"})


def test_malformed_or_unresolvable_overrides_are_refused_naming_the_setting() -> None:
    with pytest.raises(ConfigError, match="max.connections.per.ip.overrides.*is not host:count"):
        quotas(**{"max.connections.per.ip.overrides": "127.0.0.1"})
    with pytest.raises(ConfigError, match="listed twice"):
        quotas(**{"max.connections.per.ip.overrides": "a:1,a:2"})
    with pytest.raises(ConfigError, match="cannot resolve host no-such-host.invalid"):
        quotas(**{"max.connections.per.ip.overrides": "no-such-host.invalid:1"})


def test_at_max_connections_an_acceptor_waits_until_a_connection_closes() -> None:
    async def scenario() -> None:
        q = quotas(**{"max.connections": "2"})
        a, _ = q.inc("10.0.0.1"), q.inc("10.0.0.2")
        waiting = asyncio.create_task(q.wait_for_slot("PLAINTEXT"))
        await asyncio.sleep(0.01)
        assert not waiting.done()
        q.dec(a)
        await asyncio.wait_for(waiting, 1)

    asyncio.run(scenario())


def test_the_inter_broker_listener_is_exempt_from_max_connections() -> None:
    q = quotas(**{
        "max.connections": "1",
        "listeners": "CLIENT://127.0.0.1:0,BROKER://127.0.0.1:0",
        "listener.security.protocol.map": "CLIENT:PLAINTEXT,BROKER:PLAINTEXT",
        "inter.broker.listener.name": "BROKER",
    })
    q.inc("10.0.0.1")
    assert not q.has_slot("CLIENT")
    assert q.has_slot("BROKER")


def test_a_sole_listener_is_limited_even_if_brokers_use_it() -> None:
    q = quotas(**{"max.connections": "1"})
    q.inc("10.0.0.1")
    assert not q.has_slot("PLAINTEXT")


TWO_LISTENERS = {
    "listeners": "CLIENT://127.0.0.1:0,BROKER://127.0.0.1:0",
    "listener.security.protocol.map": "CLIENT:PLAINTEXT,BROKER:PLAINTEXT",
    "inter.broker.listener.name": "BROKER",
}


def test_a_listener_at_its_own_max_connections_waits_while_the_others_accept() -> None:
    q = quotas(**TWO_LISTENERS, **{"listener.name.client.max.connections": "2"})
    q.inc("10.0.0.1", "CLIENT")
    q.inc("10.0.0.2", "CLIENT")
    assert not q.has_slot("CLIENT")
    assert q.blocking_limit("CLIENT") == "listener.name.client.max.connections=2"
    assert q.has_slot("BROKER")
    q.inc("10.0.0.3", "BROKER")
    assert q.listener_count("CLIENT") == 2 and q.listener_count("BROKER") == 1 and q.total == 3
    q.dec("10.0.0.1", "CLIENT")
    assert q.has_slot("CLIENT")


def test_the_inter_broker_listener_is_bound_by_its_own_limit() -> None:
    q = quotas(**TWO_LISTENERS, **{"max.connections": "1", "listener.name.broker.max.connections": "1"})
    q.inc("10.0.0.1", "BROKER")
    assert q.blocking_limit("BROKER") == "listener.name.broker.max.connections=1"
    assert q.blocking_limit("CLIENT") == "max.connections=1"


def test_a_closed_connection_wakes_the_acceptor_of_its_own_listener_whoever_waited_first() -> None:
    async def scenario() -> None:
        q = quotas(**TWO_LISTENERS, **{"max.connections": "3", "listener.name.client.max.connections": "1"})
        q.inc("10.0.0.1", "CLIENT")
        q.inc("10.0.0.2", "BROKER")
        q.inc("10.0.0.3", "BROKER")
        client_waits = asyncio.create_task(q.wait_for_slot("CLIENT"))
        await asyncio.sleep(0.01)
        q.dec("10.0.0.2", "BROKER")  # frees a broker-wide slot, not a CLIENT one
        await asyncio.sleep(0.01)
        assert not client_waits.done()
        q.dec("10.0.0.1", "CLIENT")
        await asyncio.wait_for(client_waits, 1)

    asyncio.run(scenario())


def test_connections_over_max_connections_are_counted_as_excess() -> None:
    q = quotas(**TWO_LISTENERS, **{"max.connections": "2"})
    q.inc("10.0.0.1", "CLIENT")
    q.inc("10.0.0.2", "CLIENT")
    assert q.excess_connections() == 0
    q.inc("10.0.0.3", "BROKER")
    assert q.excess_connections() == 1


@dataclass
class FakeConnection:
    name: str
    listener_name: str
    last_active: float


def test_the_least_recently_used_connections_of_other_listeners_close_first() -> None:
    connections = [
        FakeConnection("old-broker", "BROKER", 1.0),
        FakeConnection("recent-client", "CLIENT", 9.0),
        FakeConnection("old-client", "CLIENT", 2.0),
        FakeConnection("middle-client", "CLIENT", 5.0),
    ]
    chosen = least_recently_used(connections, "BROKER", 2)
    assert [c.name for c in chosen] == ["old-client", "middle-client"]
    assert least_recently_used(connections, "BROKER", 0) == []


def test_listener_max_connections_must_name_a_listener_and_be_a_count() -> None:
    with pytest.raises(ConfigError, match="listener.name.other.max.connections.*names no listener"):
        quotas(**{"listener.name.other.max.connections": "3"})
    with pytest.raises(ConfigError, match="listener.name.plaintext.max.connections.*at least 0"):
        quotas(**{"listener.name.plaintext.max.connections": "-1"})
