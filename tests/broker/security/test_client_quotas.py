"""Client quotas: the windowed rate, Kafka's precedence of quota entities, the manager's throttle times,
and the embedded store's file."""

from __future__ import annotations

from pathlib import Path

import pytest

from broker_core.cluster.errors import MetadataStoreFileError
from broker_core.security.quotas.client_quota_entity import (
    CONSUMER_BYTE_RATE,
    DEFAULT,
    PRODUCER_BYTE_RATE,
    ClientQuotaEntity,
    resolve,
)
from broker_core.security.quotas.client_quota_manager import ClientQuotaManager
from broker_core.security.quotas.quota_store import (
    QUOTAS_FILE_NAME,
    FileClientQuotaStore,
    entity_path,
    parse_entity_path,
)
from broker_core.security.quotas.rate_sensor import RateConfig, WindowedRate

E = ClientQuotaEntity


class TestWindowedRate:
    def test_a_young_rate_counts_as_if_samples_minus_one_windows_had_passed(self) -> None:
        rate = WindowedRate(RateConfig(11, 1.0))
        rate.record(1000, now=100.0)
        assert rate.window_size(100.5) == pytest.approx(10.0)
        assert rate.rate(100.5) == pytest.approx(100)
        assert rate.window_size(110.5) == pytest.approx(10.5)

    def test_a_sample_as_old_as_the_whole_window_is_dropped(self) -> None:
        rate = WindowedRate(RateConfig(11, 1.0))
        rate.record(1000, now=0.0)
        rate.record(10, now=10.5)
        assert rate.rate(10.9) == pytest.approx(1010 / 10.9)
        assert rate.rate(11.0) == pytest.approx(10 / 10.0)

    def test_old_samples_leave_the_window(self) -> None:
        rate = WindowedRate(RateConfig(3, 1.0))
        rate.record(500, now=0.0)
        rate.record(100, now=5.0)
        assert rate.rate(5.0) == pytest.approx(100 / 2.0)

    def test_a_steady_rate_reads_as_itself(self) -> None:
        rate = WindowedRate(RateConfig(11, 1.0))
        for tick in range(200):
            rate.record(100, now=tick * 0.1)
        assert rate.rate(19.95) == pytest.approx(1000, rel=0.06)

    def test_throttle_time_lasts_until_the_window_is_long_enough_for_what_it_holds(self) -> None:
        rate = WindowedRate(RateConfig(11, 1.0))
        rate.record(10_500, now=0.0)  # 1050/s over the 10 s a young window counts
        assert rate.throttle_time_s(1000, now=0.0) == pytest.approx(10.5)
        assert rate.throttle_time_s(1000, now=2.0) == pytest.approx(8.5)
        assert rate.throttle_time_s(2000, now=0.0) == 0.0

    def test_a_client_kept_at_its_throttle_times_averages_its_quota(self) -> None:
        rate, now, recorded = WindowedRate(RateConfig(11, 1.0)), 0.0, 0
        while now < 60:
            rate.record(250_000, now)
            recorded += 250_000
            now += rate.throttle_time_s(1_000_000, now) or 0.01
        assert recorded / now == pytest.approx(1_000_000, rel=0.03)

    def test_throttle_time_is_capped_at_the_whole_window(self) -> None:
        rate = WindowedRate(RateConfig(11, 1.0))
        rate.record(10**9, now=0.0)
        assert rate.throttle_time_s(1, now=0.0) == 11.0


class TestPrecedence:
    ALL = {
        E("alice", "app"): 1, E("alice", DEFAULT): 2, E("alice", None): 3, E(DEFAULT, "app"): 4,
        E(DEFAULT, DEFAULT): 5, E(DEFAULT, None): 6, E(None, "app"): 7, E(None, DEFAULT): 8,
    }

    @pytest.mark.parametrize("winner", range(1, 9))
    def test_the_most_specific_entity_that_sets_the_quota_wins(self, winner: int) -> None:
        quotas = {e: {PRODUCER_BYTE_RATE: float(n)} for e, n in self.ALL.items() if n >= winner}
        assert resolve(quotas, PRODUCER_BYTE_RATE, "alice", "app").bound == winner

    def test_each_quota_type_is_resolved_on_its_own(self) -> None:
        quotas = {E("alice", None): {PRODUCER_BYTE_RATE: 10.0}, E(None, "app"): {CONSUMER_BYTE_RATE: 20.0}}
        assert resolve(quotas, PRODUCER_BYTE_RATE, "alice", "app").bound == 10
        assert resolve(quotas, CONSUMER_BYTE_RATE, "alice", "app").bound == 20
        assert resolve(quotas, CONSUMER_BYTE_RATE, "alice", "other") is None

    def test_clients_of_a_named_entity_share_one_rate_and_defaults_give_each_their_own(self) -> None:
        quotas = {E("alice", None): {PRODUCER_BYTE_RATE: 1.0}, E(DEFAULT, None): {PRODUCER_BYTE_RATE: 2.0}}
        assert resolve(quotas, PRODUCER_BYTE_RATE, "alice", "a").sensor_key == ("alice", "")
        assert resolve(quotas, PRODUCER_BYTE_RATE, "alice", "b").sensor_key == ("alice", "")
        assert resolve(quotas, PRODUCER_BYTE_RATE, "bob", "b").sensor_key == ("bob", "")

    def test_an_entity_names_a_user_or_a_client(self) -> None:
        with pytest.raises(ValueError):
            E(None, None)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class TestClientQuotaManager:
    def test_a_client_over_its_byte_rate_gets_a_throttle_time_and_others_none(self, tmp_path: Path) -> None:
        store = FileClientQuotaStore(tmp_path)
        store.alter(E(None, "app"), {PRODUCER_BYTE_RATE: 1000.0})
        clock = _Clock()
        manager = ClientQuotaManager(store, RateConfig(11, 1.0), clock=clock)
        assert manager.record_produce("u", "app", 5_000) == 0  # 500/s over a young window
        assert manager.record_produce("u", "app", 5_500) == 10_500
        assert manager.record_produce("u", "other", 10**6) == 0

    def test_a_request_percentage_counts_handling_time(self, tmp_path: Path) -> None:
        store = FileClientQuotaStore(tmp_path)
        store.alter(E(DEFAULT, None), {"request_percentage": 10.0})
        manager = ClientQuotaManager(store, RateConfig(11, 1.0), clock=_Clock())
        assert manager.record_request_time("u", "c", 0.5) == 0  # 50 percent-seconds over 10 s: 5%
        assert manager.record_request_time("u", "c", 0.55) == 10_500


class TestFileStore:
    def test_quotas_survive_a_restart_and_removing_the_last_key_removes_the_entity(self, tmp_path: Path) -> None:
        store = FileClientQuotaStore(tmp_path)
        store.alter(E("alice", DEFAULT), {PRODUCER_BYTE_RATE: 1024.0, CONSUMER_BYTE_RATE: 2048.0})
        store.alter(E("alice", DEFAULT), {PRODUCER_BYTE_RATE: None})
        assert FileClientQuotaStore(tmp_path).snapshot() == {E("alice", DEFAULT): {CONSUMER_BYTE_RATE: 2048.0}}
        store.alter(E("alice", DEFAULT), {CONSUMER_BYTE_RATE: None})
        assert FileClientQuotaStore(tmp_path).snapshot() == {}

    def test_a_damaged_file_is_reported_naming_it(self, tmp_path: Path) -> None:
        (tmp_path / QUOTAS_FILE_NAME).write_text("{not json")
        with pytest.raises(MetadataStoreFileError, match=QUOTAS_FILE_NAME):
            FileClientQuotaStore(tmp_path)

    @pytest.mark.parametrize("entity, path", [
        (E("alice", None), "users/alice"), (E(None, DEFAULT), "clients/<default>"),
        (E("a/b", "app 1"), "users/a%2Fb/clients/app%201"), (E(DEFAULT, "x"), "users/<default>/clients/x"),
        (E("<default>", None), "users/%3Cdefault%3E"),
    ])
    def test_entity_paths_are_kafkas_znode_paths(self, entity: ClientQuotaEntity, path: str) -> None:
        assert entity_path(entity) == path
        assert parse_entity_path(path) == entity


class TestExemptions:
    def test_follower_fetches_and_cluster_requests_are_never_throttled(self) -> None:
        from types import SimpleNamespace

        from broker_core.security.quotas.throttling import exempt
        from spate.protocol.api_keys import ApiKey

        assert exempt(ApiKey.FETCH, SimpleNamespace(replica_id=2))
        assert not exempt(ApiKey.FETCH, SimpleNamespace(replica_id=-1))
        assert exempt(ApiKey.LEADER_AND_ISR, None) and exempt(ApiKey.WRITE_TXN_MARKERS, None)
        assert not exempt(ApiKey.PRODUCE, None)
