"""The controller's request channel: a broker refusing connections for a moment is not worth a warning."""

from __future__ import annotations

import logging
import time

from broker_core.controller import channel_manager
from broker_core.controller.channel_manager import BrokerEndpoint, _Queued, _SenderThread
from tests.support.ports import free_port


def deliver_to_nobody(seconds: float) -> None:
    sender = _SenderThread(BrokerEndpoint(1, "127.0.0.1", free_port()), client_id="controller-test",
                           timeout_s=1.0, backoff_s=0.05)
    sender.start()
    sender.requests.put(_Queued(18, 0, None, None))
    time.sleep(seconds)
    sender.stop()
    sender.join(5)
    assert not sender.is_alive()


def retry_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == channel_manager.__name__ and "retrying" in r.getMessage()]


def test_a_broker_refusing_briefly_is_logged_at_info(caplog):
    caplog.set_level(logging.INFO, logger=channel_manager.__name__)
    deliver_to_nobody(0.5)
    records = retry_records(caplog)
    assert records and {r.levelno for r in records} == {logging.INFO}


def test_a_broker_unreachable_for_long_is_a_warning(caplog, monkeypatch):
    monkeypatch.setattr(channel_manager, "WARN_AFTER_S", 0.2)
    caplog.set_level(logging.INFO, logger=channel_manager.__name__)
    deliver_to_nobody(0.6)
    levels = [r.levelno for r in retry_records(caplog)]
    assert levels[0] == logging.INFO and levels[-1] == logging.WARNING
