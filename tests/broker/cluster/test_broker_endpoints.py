"""A broker's advertised endpoints: registered whole, read back whole, reached through a named listener."""

from __future__ import annotations

import pytest

from broker_core.cluster.endpoint import EndPoint
from broker_core.cluster.metadata_store import BrokerRegistration
from broker_core.cluster.zk.znodes import BrokerIdZNode, BrokerInfo

CLIENT = EndPoint("CLIENT", "c1", 9092)
REPLICATION = EndPoint("REPLICATION", "r1", 9093)


def test_a_registration_made_with_an_address_advertises_one_plaintext_listener_there() -> None:
    assert BrokerRegistration(1, "h", 9092).endpoints == (EndPoint("PLAINTEXT", "h", 9092, "PLAINTEXT"),)
    assert BrokerRegistration(1, "", -1).endpoints == ()  # a registration without any endpoint


def test_a_broker_advertising_several_listeners_is_reached_through_the_one_named() -> None:
    registration = BrokerRegistration.advertising(1, (CLIENT, REPLICATION), "rack-a", reached_through="replication")
    assert (registration.host, registration.port, registration.rack) == ("r1", 9093, "rack-a")
    assert registration.endpoints == (CLIENT, REPLICATION)
    assert registration.through("CLIENT") == BrokerRegistration(1, "c1", 9092, "rack-a", (CLIENT, REPLICATION))
    assert registration.through("OTHER") is None
    assert registration.endpoint("client") == CLIENT
    # Without the named listener it is reached at the first endpoint.
    assert BrokerRegistration.advertising(1, (CLIENT, REPLICATION), reached_through="OTHER").port == 9092
    with pytest.raises(ValueError, match="advertises no endpoint"):
        BrokerRegistration.advertising(1, ())


def test_the_registration_znode_lists_every_endpoint_and_reads_back_whole() -> None:
    registration = BrokerRegistration.advertising(4, (CLIENT, REPLICATION), reached_through="REPLICATION")
    data = BrokerIdZNode.encode(BrokerInfo.from_registration(registration, timestamp_ms=1))
    assert b'"endpoints":["CLIENT://c1:9092","REPLICATION://r1:9093"]' in data
    assert b'"listener_security_protocol_map":{"CLIENT":"PLAINTEXT","REPLICATION":"PLAINTEXT"}' in data
    decoded = BrokerIdZNode.decode(4, data).registration()
    assert decoded.endpoints == (CLIENT, REPLICATION)
    assert decoded.through("REPLICATION") == registration
