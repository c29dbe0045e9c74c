"""Transaction requests that break the rules get Kafka's error codes, at the byte level.

Each test speaks the protocol directly (Spate's codec over a socket) so the
exact code the broker sends is checked, for the request versions the
clients use: v0 (librdkafka, aiokafka) knows a fenced producer as
INVALID_PRODUCER_EPOCH, v2 as PRODUCER_FENCED.
"""

from __future__ import annotations

import time

import pytest

from spate.protocol.api_keys import ApiKey
from spate.protocol.errors import ErrorCode
from spate.protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from spate.protocol.messages.add_partitions_to_txn import AddPartitionsToTxnRequest
from spate.protocol.messages.end_txn import EndTxnRequest
from spate.protocol.messages.find_coordinator import (
    KEY_TYPE_GROUP,
    KEY_TYPE_TRANSACTION,
    FindCoordinatorRequest,
)
from spate.protocol.messages.init_producer_id import InitProducerIdRequest
from spate.protocol.messages.txn_offset_commit import TxnOffsetCommitRequest
from tests.scenarios.groups.topics import create_topic
from tests.support.raw_client import RawClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

E = ErrorCode
APR = AddPartitionsToTxnRequest
TOC = TxnOffsetCommitRequest


@pytest.fixture
def raw(broker):
    with RawClient(broker.bootstrap, client_id="txn-protocol-test") as client:
        yield client


@pytest.fixture
def topic(broker, unique):
    name = unique("t")
    create_topic(broker.bootstrap, name, 2)
    return name


def init(raw: RawClient, transactional_id: str, timeout_ms: int = 60_000, version: int = 1):
    deadline = time.monotonic() + 20
    while True:
        response = raw.call(ApiKey.INIT_PRODUCER_ID, version,
                            InitProducerIdRequest(transactional_id=transactional_id, transaction_timeout_ms=timeout_ms))
        if response.error_code not in (E.CONCURRENT_TRANSACTIONS, E.COORDINATOR_LOAD_IN_PROGRESS) \
                or time.monotonic() > deadline:
            return response
        time.sleep(0.05)


def add_partitions(raw: RawClient, txn: str, pid: int, epoch: int, topic: str, partitions, version: int = 0):
    body = APR(v3_and_below_transactional_id=txn, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
               v3_and_below_topics=[APR.AddPartitionsToTxnTopic(name=topic, partitions=list(partitions))])
    response = raw.call(ApiKey.ADD_PARTITIONS_TO_TXN, version, body)
    return {(t.name, r.partition_index): r.partition_error_code
            for t in response.results_by_topic_v3_and_below for r in t.results_by_partition}


def end_txn(raw: RawClient, txn: str, pid: int, epoch: int, commit: bool, version: int = 0) -> int:
    body = EndTxnRequest(transactional_id=txn, producer_id=pid, producer_epoch=epoch, committed=commit)
    return raw.call(ApiKey.END_TXN, version, body).error_code


def txn_offset_commit(raw: RawClient, txn: str, group: str, pid: int, epoch: int, topic: str) -> int:
    body = TOC(transactional_id=txn, group_id=group, producer_id=pid, producer_epoch=epoch, topics=[
        TOC.TxnOffsetCommitRequestTopic(name=topic, partitions=[
            TOC.TxnOffsetCommitRequestPartition(
                partition_index=0, committed_offset=5, committed_metadata="")])])
    response = raw.call(ApiKey.TXN_OFFSET_COMMIT, 0, body)
    return response.topics[0].partitions[0].error_code


def test_find_coordinator_for_a_transactional_id_names_this_broker(raw, broker, unique):
    response = raw.call(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key=unique("txn"),
                                                                           key_type=KEY_TYPE_TRANSACTION))
    assert response.error_code == E.NONE
    assert response.port == broker.port


def test_init_producer_id_fences_by_bumping_the_epoch(raw, unique):
    txn = unique("txn")
    first = init(raw, txn)
    second = init(raw, txn)
    assert (first.error_code, second.error_code) == (E.NONE, E.NONE)
    assert second.producer_id == first.producer_id and second.producer_epoch == first.producer_epoch + 1


def test_transaction_timeout_above_the_maximum_is_refused(raw, unique):
    assert init(raw, unique("txn"), timeout_ms=900_001).error_code == E.INVALID_TRANSACTION_TIMEOUT


def test_end_txn_for_an_unknown_transactional_id(raw, unique):
    assert end_txn(raw, unique("never-initialised"), 1, 0, True) == E.INVALID_PRODUCER_ID_MAPPING


def test_end_txn_with_no_transaction_open_is_an_invalid_state(raw, unique):
    txn = unique("txn")
    producer = init(raw, txn)
    assert end_txn(raw, txn, producer.producer_id, producer.producer_epoch, True) == E.INVALID_TXN_STATE


@pytest.mark.parametrize("version, expected", [(0, E.INVALID_PRODUCER_EPOCH), (2, E.PRODUCER_FENCED)])
def test_old_epoch_is_fenced_in_the_words_of_each_version(raw, unique, topic, version, expected):
    txn = unique("txn")
    old = init(raw, txn)
    init(raw, txn)
    errors = add_partitions(raw, txn, old.producer_id, old.producer_epoch, topic, [0], version=version)
    assert errors == {(topic, 0): expected}
    assert end_txn(raw, txn, old.producer_id, old.producer_epoch, False, version=version) == expected


def test_wrong_producer_id_is_an_invalid_mapping(raw, unique, topic):
    txn = unique("txn")
    producer = init(raw, txn)
    errors = add_partitions(raw, txn, producer.producer_id + 1, producer.producer_epoch, topic, [0])
    assert errors == {(topic, 0): E.INVALID_PRODUCER_ID_MAPPING}


def test_unknown_partitions_fail_the_request_and_the_rest_are_not_attempted(raw, unique, topic):
    txn = unique("txn")
    producer = init(raw, txn)
    errors = add_partitions(raw, txn, producer.producer_id, producer.producer_epoch, topic, [0, 7])
    assert errors == {(topic, 0): E.OPERATION_NOT_ATTEMPTED, (topic, 7): E.UNKNOWN_TOPIC_OR_PARTITION}
    errors = add_partitions(raw, txn, producer.producer_id, producer.producer_epoch, unique("missing"), [0])
    assert set(errors.values()) == {E.UNKNOWN_TOPIC_OR_PARTITION}


def test_concurrent_end_txn_is_told_to_retry_and_a_mismatched_one_is_refused(raw, unique, topic):
    txn = unique("txn")
    p = init(raw, txn)
    add_partitions(raw, txn, p.producer_id, p.producer_epoch, topic, [0, 1])
    assert end_txn(raw, txn, p.producer_id, p.producer_epoch, True) == E.NONE
    # Sent in the same breath: the markers have not all been written yet, or the commit is complete.
    again = end_txn(raw, txn, p.producer_id, p.producer_epoch, True)
    assert again in (E.CONCURRENT_TRANSACTIONS, E.NONE)
    assert end_txn(raw, txn, p.producer_id, p.producer_epoch, False) == E.INVALID_TXN_STATE


def test_txn_offset_commit_outside_a_transaction_is_an_invalid_state(raw, unique, topic):
    txn = unique("txn")
    p = init(raw, txn)
    group = unique("group")
    found = raw.call(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key=group, key_type=KEY_TYPE_GROUP))
    assert found.error_code == E.NONE
    assert txn_offset_commit(raw, txn, group, p.producer_id, p.producer_epoch, topic) == E.INVALID_TXN_STATE
    add_partitions(raw, txn, p.producer_id, p.producer_epoch, topic, [0])
    # The transaction is open, but the group's offsets were never added to it.
    assert txn_offset_commit(raw, txn, group, p.producer_id, p.producer_epoch, topic) == E.INVALID_TXN_STATE
    response = raw.call(ApiKey.ADD_OFFSETS_TO_TXN, 0, AddOffsetsToTxnRequest(
        transactional_id=txn, producer_id=p.producer_id, producer_epoch=p.producer_epoch, group_id=group))
    assert response.error_code == E.NONE
    assert txn_offset_commit(raw, txn, group, p.producer_id, p.producer_epoch, topic) == E.NONE
    assert end_txn(raw, txn, p.producer_id, p.producer_epoch, False) == E.NONE


# -- AddPartitionsToTxn v4+: a broker's batch of transactions, added or only verified (KIP-890) --------------


def broker_add_partitions(raw: RawClient, transactions: list[tuple[str, int, int, bool, str, list[int]]],
                          version: int = 5):
    """``transactions``: (transactional id, producer id, epoch, verify only, topic, partitions) each."""
    body = APR(transactions=[
        APR.AddPartitionsToTxnTransaction(
            transactional_id=txn, producer_id=pid, producer_epoch=epoch, verify_only=verify_only,
            topics=[APR.AddPartitionsToTxnTransactionTopic(name=topic, partitions=partitions)])
        for txn, pid, epoch, verify_only, topic, partitions in transactions])
    response = raw.call(ApiKey.ADD_PARTITIONS_TO_TXN, version, body)
    assert response.error_code == E.NONE
    return {result.transactional_id: {(t.name, r.partition_index): r.partition_error_code
                                      for t in result.topic_results for r in t.results_by_partition}
            for result in response.results_by_transaction}


def test_a_broker_verifies_which_partitions_are_in_each_transaction_of_a_batch(raw, unique, topic):
    first, second = unique("txn"), unique("txn")
    a, b = init(raw, first), init(raw, second)
    add_partitions(raw, first, a.producer_id, a.producer_epoch, topic, [0], version=3)
    answers = broker_add_partitions(raw, [
        (first, a.producer_id, a.producer_epoch, True, topic, [0, 1]),
        (second, b.producer_id, b.producer_epoch, True, topic, [0]),
    ])
    assert answers == {
        first: {(topic, 0): E.NONE, (topic, 1): E.TRANSACTION_ABORTABLE},
        second: {(topic, 0): E.TRANSACTION_ABORTABLE},
    }
    # v4 predates TRANSACTION_ABORTABLE: the same answer in its words.
    answer_v4 = broker_add_partitions(raw, [(first, a.producer_id, a.producer_epoch, True, topic, [1])], version=4)
    assert answer_v4 == {first: {(topic, 1): E.INVALID_TXN_STATE}}


def test_a_broker_request_that_is_not_verify_only_adds_the_partitions(raw, unique, topic):
    txn = unique("txn")
    p = init(raw, txn)
    assert broker_add_partitions(raw, [(txn, p.producer_id, p.producer_epoch, False, topic, [1])]) == {
        txn: {(topic, 1): E.NONE}}
    assert broker_add_partitions(raw, [(txn, p.producer_id, p.producer_epoch, True, topic, [1])]) == {
        txn: {(topic, 1): E.NONE}}
    assert end_txn(raw, txn, p.producer_id, p.producer_epoch, False) == E.NONE


def test_verification_checks_the_producer_and_the_partitions(raw, unique, topic):
    txn = unique("txn")
    old = init(raw, txn)
    new = init(raw, txn)
    verify = [(txn, old.producer_id, old.producer_epoch, True, topic, [0])]
    assert broker_add_partitions(raw, verify) == {txn: {(topic, 0): E.PRODUCER_FENCED}}
    verify = [(txn, new.producer_id + 1, new.producer_epoch, True, topic, [0])]
    assert broker_add_partitions(raw, verify) == {txn: {(topic, 0): E.INVALID_PRODUCER_ID_MAPPING}}
    verify = [(txn, new.producer_id, new.producer_epoch, True, topic, [0, 9])]
    assert broker_add_partitions(raw, verify) == {
        txn: {(topic, 0): E.OPERATION_NOT_ATTEMPTED, (topic, 9): E.UNKNOWN_TOPIC_OR_PARTITION}}
    assert broker_add_partitions(raw, [("", 1, 0, True, topic, [0])]) == {"": {(topic, 0): E.INVALID_REQUEST}}
