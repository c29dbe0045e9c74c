"""SIGTERM while clients connect and send: the broker drains, closes its connections and exits 0, every time.

Each round starts a broker, lets a storm of raw clients connect, pipeline
requests and hang up, and sends SIGTERM at a moment drawn from a printed seed
(``SPATE_SHUTDOWN_SEED`` replays a run; ``SPATE_SHUTDOWN_ROUNDS`` sets how many
rounds). The broker must exit with code 0 within ``EXIT_BOUND_S`` each time.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest

from tests.scenarios.connections.raw_clients import ClientStorm
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROUNDS = int(os.environ.get("SPATE_SHUTDOWN_ROUNDS", "8"))
EXIT_BOUND_S = 15.0


def test_sigterm_during_a_connection_storm_always_exits_cleanly_and_in_bounded_time(tmp_path):
    seed = int(os.environ.get("SPATE_SHUTDOWN_SEED", str(random.randrange(1 << 30))))
    print(f"\nshutdown storm seed {seed} (SPATE_SHUTDOWN_SEED replays it)")
    rng = random.Random(seed)
    exits: list[float] = []
    for round_index in range(ROUNDS):
        broker = BrokerProcess(tmp_path / f"round-{round_index}", overrides={"num.io.threads": "2"}).start()
        storm = ClientStorm(broker.port, threads=12).start()
        try:
            deadline = time.monotonic() + 5.0
            while storm.connections < 20 and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 0.3))
            broker.process.send_signal(signal.SIGTERM)
            sent = time.monotonic()
            try:
                code = broker.process.wait(EXIT_BOUND_S)
            except subprocess.TimeoutExpired:
                broker.kill()
                pytest.fail(f"round {round_index} (seed {seed}): the broker ignored SIGTERM for {EXIT_BOUND_S}s "
                            f"with clients connected:\n{broker.log_tail()}")
            exits.append(time.monotonic() - sent)
            assert code == 0, f"round {round_index} (seed {seed}): exit code {code}\n{broker.log_tail()}"
        finally:
            storm.join()
            broker.kill()
    print(f"{ROUNDS} rounds: SIGTERM to exit {min(exits):.2f}s .. {max(exits):.2f}s")
