"""The broker runs storage's log cleaner as its log.cleaner.* settings say (log_cleaner_service.py)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from broker_core.config.broker_config import BrokerConfig
from broker_core.server.log_cleaner_service import _on_loop, cleaner_config, start_log_cleaner
from broker_core.storage.cleaner.log_cleaner import CleanerStopped


def test_the_cleaner_takes_kafkas_settings_and_defaults():
    defaults = cleaner_config(BrokerConfig.from_properties({}))
    assert (defaults.enable, defaults.threads, defaults.backoff_ms, defaults.dedupe_buffer_size) == (
        True, 1, 15_000, 134_217_728,
    )
    assert defaults.io_max_bytes_per_second == 1.7976931348623157e308
    custom = cleaner_config(BrokerConfig.from_properties({
        "log.cleaner.threads": "2", "log.cleaner.io.max.bytes.per.second": "1048576",
        "log.cleaner.dedupe.buffer.size": "1000000", "log.cleaner.backoff.ms": "50",
    }))
    assert (custom.threads, custom.io_max_bytes_per_second, custom.dedupe_buffer_size, custom.backoff_ms) == (
        2, 1048576.0, 1_000_000, 50,
    )


@pytest.mark.parametrize("settings", [{"log.cleaner.enable": "false"}, {"log.cleaner.threads": "0"}])
def test_no_cleaner_runs_when_disabled_or_without_threads(settings: dict[str, str]):
    assert start_log_cleaner(BrokerConfig.from_properties(settings), None, None, lambda: 0) is None  # type: ignore[arg-type]


def test_work_handed_to_the_loop_runs_on_the_loop_thread_and_returns_its_result():
    loop = asyncio.new_event_loop()
    runner = threading.Thread(target=loop.run_forever, daemon=True)
    runner.start()
    try:
        run = _on_loop(loop)
        assert run(threading.get_ident) == runner.ident
        with pytest.raises(ZeroDivisionError):
            run(lambda: 1 / 0)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        runner.join(5)
        loop.close()
    with pytest.raises(CleanerStopped):
        run(lambda: None)
