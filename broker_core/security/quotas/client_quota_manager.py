"""Per-client rates and the throttle time each request earns.

One manager serves the three quota types: ``producer_byte_rate`` (bytes of
Produce requests), ``consumer_byte_rate`` (bytes of Fetch responses) and
``request_percentage`` (time spent handling the client's requests, in percent
of one thread). Each request records its amount in the rate of the entity
that sets the quota (see :mod:`client_quota_entity`) and gets back the time
the client must wait, in milliseconds: the response carries it as
``throttle_time_ms`` and the connection reads nothing more until it has
passed (Kafka's KIP-219). Clients without a quota cost a dictionary lookup.

Rates of entities no longer used are dropped after an hour without a record,
as Kafka expires its quota sensors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from broker_core.security.quotas.client_quota_entity import (
    CONSUMER_BYTE_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    resolve,
)
from broker_core.security.quotas.quota_store import ClientQuotaStore
from broker_core.security.quotas.rate_sensor import RateConfig, WindowedRate

SENSOR_EXPIRY_S = 3600.0


@dataclass
class _Sensor:
    rate: WindowedRate
    last_record: float


@dataclass
class ClientQuotaManager:
    store: ClientQuotaStore
    config: RateConfig = field(default_factory=RateConfig)
    clock: Callable[[], float] = time.monotonic
    _sensors: dict[tuple[str, str, str], _Sensor] = field(default_factory=dict)
    _last_expiry: float = 0.0

    def record(self, key: str, user: str, client_id: str, value: float) -> int:
        """Record ``value`` for the client's ``key`` quota; the throttle time it earned in ms (0: none)."""
        quota = resolve(self.store.snapshot(), key, user, client_id)
        if quota is None:
            return 0
        now = self.clock()
        sensor_key = (key, *quota.sensor_key)
        sensor = self._sensors.get(sensor_key)
        if sensor is None:
            sensor = self._sensors[sensor_key] = _Sensor(WindowedRate(self.config), now)
            self._expire(now)
        sensor.last_record = now
        sensor.rate.record(value, now)
        return int(sensor.rate.throttle_time_s(quota.bound, now) * 1000)

    def record_produce(self, user: str, client_id: str, request_bytes: int) -> int:
        return self.record(PRODUCER_BYTE_RATE, user, client_id, request_bytes)

    def record_fetch(self, user: str, client_id: str, response_bytes: int) -> int:
        return self.record(CONSUMER_BYTE_RATE, user, client_id, response_bytes)

    def record_request_time(self, user: str, client_id: str, seconds: float) -> int:
        """``seconds`` of handling, as percent-seconds so the rate reads as percent of one thread."""
        return self.record(REQUEST_PERCENTAGE, user, client_id, seconds * 100)

    def has_quotas(self) -> bool:
        return bool(self.store.snapshot())

    def _expire(self, now: float) -> None:
        if now - self._last_expiry < 60:
            return
        self._last_expiry = now
        for key in [k for k, s in self._sensors.items() if now - s.last_record > SENSOR_EXPIRY_S]:
            del self._sensors[key]
