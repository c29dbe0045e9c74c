"""``spate cluster up`` as a user runs it, and the cluster commands on the real cluster it starts.

Two kinds of test:

* The launcher: start, the bootstrap line, the status table, stopping on
  SIGTERM or Ctrl-C, a child that dies during start-up, usage errors. These
  run the brokers with ``--override zookeeper.connect=`` (embedded metadata),
  so they need nothing from the broker's cluster mode.
* A real cluster (ZooKeeper and brokers joined through it), and ``spate
  cluster describe``, ``topics reassign``, ``topics elect-leaders`` and
  ``topics alter-config`` on it. These skip, saying why, while a broker
  started with ``zookeeper.connect`` refuses to run (checked once per
  module by starting one); they run by themselves once it does.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from spate.client import Admin, AdminError, ErrorCode, NewTopic, Producer
from tests.spate.cli.conftest import assert_one_line_failure, spate
from tests.spate.cli.output import json_lines, table_row
from tests.support.ports import free_port, free_ports
from tests.support.zookeeper import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

START_TIMEOUT_S = 90
STOP_TIMEOUT_S = 60
EMBEDDED = ("--override", "zookeeper.connect=")  # brokers without cluster mode



def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class ClusterUp:
    """One ``spate cluster up`` child process, its stdout and stderr in files under ``data_dir``."""

    data_dir: Path
    brokers: int = 1
    extra: tuple[str, ...] = ()
    base_port: int = field(default=0)
    zookeeper_port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        self.base_port = self.base_port or free_ports(self.brokers)
        self.stdout_path = self.data_dir.parent / f"{self.data_dir.name}.stdout"
        self.stderr_path = self.data_dir.parent / f"{self.data_dir.name}.stderr"

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.base_port + i}" for i in range(self.brokers))

    @property
    def ports(self) -> list[int]:
        return [self.zookeeper_port, *(self.base_port + i for i in range(self.brokers))]

    def start(self) -> ClusterUp:
        command = [sys.executable, "-m", "spate.cli.main", "cluster", "up", "--brokers", str(self.brokers),
                   "--data-dir", str(self.data_dir), "--base-port", str(self.base_port),
                   "--zookeeper-port", str(self.zookeeper_port), *self.extra]
        with open(self.stdout_path, "wb") as out, open(self.stderr_path, "wb") as err:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        return self

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_up(self) -> str:
        """The bootstrap line, once printed; fails with stderr if the command exits first."""
        wait_until(lambda: self.stdout.strip() or self.process.poll() is not None, "the bootstrap line",
                   timeout_s=START_TIMEOUT_S)
        assert self.process.poll() is None, f"cluster up exited with {self.process.returncode}:\n{self.stderr}"
        return self.stdout.splitlines()[0]

    def stop(self, signum: int = signal.SIGTERM) -> int:
        self.process.send_signal(signum)
        return self.process.wait(STOP_TIMEOUT_S)

    def children(self) -> list[int]:
        try:
            text = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        except OSError:
            return []
        return [int(pid) for pid in text.split()]

    def kill(self) -> None:
        """The last resort: the command and the children it started, by id."""
        if self.process is None or self.process.poll() is not None:
            return
        for pid in self.children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.kill()
        self.process.wait()


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[list[ClusterUp]]:
    """``cluster up`` processes of one test; whatever still runs at the end is killed."""
    started: list[ClusterUp] = []
    yield started
    for cluster in started:
        cluster.kill()


def launch(launched: list[ClusterUp], data_dir: Path, *extra: str, brokers: int = 1, **settings) -> ClusterUp:
    cluster = ClusterUp(data_dir, brokers=brokers, extra=extra, **settings)
    launched.append(cluster)
    return cluster.start()


def assert_all_stopped(cluster: ClusterUp) -> None:
    assert cluster.children() == []
    assert [port for port in cluster.ports if listening(port)] == []


# --- the launcher -------------------------------------------------------------------------------


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "Ctrl-C"])
def test_up_prints_the_bootstrap_line_serves_and_stops_on_a_signal(tmp_path, launched, stop_signal) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--no-status", *EMBEDDED)
    assert cluster.wait_up() == cluster.bootstrap
    with Admin(cluster.bootstrap, default_api_timeout_ms=10_000) as admin:
        assert [b.port for b in admin.describe_cluster().brokers] == [cluster.base_port]
    assert listening(cluster.zookeeper_port)
    assert cluster.stop(stop_signal) == 0, cluster.stderr
    assert_all_stopped(cluster)
    assert cluster.stdout == cluster.bootstrap + "\n", "--no-status prints only the bootstrap line"
    assert "Traceback" not in cluster.stderr
    assert (tmp_path / "cluster" / "broker-0.log").is_file() and (tmp_path / "cluster" / "zookeeper.log").is_file()
    assert "stopped cleanly" in (tmp_path / "cluster" / "broker-0.log").read_text()
    assert (tmp_path / "cluster" / "zookeeper" / "version-2").is_dir()


def test_the_status_table_shows_each_broker_its_partitions_and_the_controller(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", *EMBEDDED)
    cluster.wait_up()
    with Admin(cluster.bootstrap, default_api_timeout_ms=10_000) as admin:
        admin.create_topics(NewTopic("led", num_partitions=2))
    time.sleep(5)  # two refreshes (every 2 s) after the topic exists
    assert cluster.stop() == 0, cluster.stderr
    # On a pipe the live table is printed once, as it last was.
    address = f"127.0.0.1:{cluster.base_port}"
    assert table_row(cluster.stdout, "0") == ["0", address, "yes", "2", "*"]
    assert f"ZooKeeper 127.0.0.1:{cluster.zookeeper_port}: running" in cluster.stdout


def test_json_output_starts_with_the_cluster_then_one_status_line_per_refresh(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--output", "json", *EMBEDDED)
    started = json.loads(cluster.wait_up())
    address = f"127.0.0.1:{cluster.base_port}"
    assert started == {
        "bootstrap_servers": address,
        "zookeeper": {"address": f"127.0.0.1:{cluster.zookeeper_port}",
                      "log": str(tmp_path / "cluster" / "zookeeper.log")},
        "brokers": [{"id": 0, "address": address, "log": str(tmp_path / "cluster" / "broker-0.log")}],
    }
    wait_until(lambda: len(cluster.stdout.splitlines()) >= 2, "a status line")
    assert cluster.stop() == 0, cluster.stderr
    status = json_lines(cluster.stdout)[1]
    assert status == {
        "zookeeper": {"running": True, "exit_code": None}, "controller": 0, "problem": None,
        "brokers": [{"id": 0, "address": address, "running": True, "exit_code": None, "alive": True,
                     "partitions_led": 0}],
    }


def test_a_broker_that_dies_during_start_up_stops_everything_and_shows_its_log(tmp_path, launched) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        cluster = launch(launched, tmp_path / "cluster", "--no-status", *EMBEDDED, base_port=taken.getsockname()[1])
        assert cluster.process.wait(START_TIMEOUT_S) == 1
    log = tmp_path / "cluster" / "broker-0.log"
    assert f"spate: broker-0 exited with code 1 during start-up; the end of {log}:" in cluster.stderr
    assert "already in use" in cluster.stderr
    assert log.read_text().splitlines()[-1].strip() in cluster.stderr
    assert "Traceback" not in cluster.stderr
    assert cluster.stdout == ""
    assert_all_stopped(cluster)


def test_a_taken_zookeeper_port_stops_before_any_broker_starts(tmp_path, launched) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        cluster = launch(launched, tmp_path / "cluster", "--no-status", *EMBEDDED, zookeeper_port=port)
        assert cluster.process.wait(START_TIMEOUT_S) == 1
    assert "spate: zookeeper exited with code 1 during start-up" in cluster.stderr
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in cluster.stderr
    assert not (tmp_path / "cluster" / "broker-0.log").exists()


def test_a_start_that_outlasts_its_timeout_stops_everything(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--no-status", "--start-timeout-ms", "1", *EMBEDDED)
    assert cluster.process.wait(START_TIMEOUT_S) == 1
    assert "spate: timed out waiting for ZooKeeper to serve" in cluster.stderr
    assert_all_stopped(cluster)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--brokers", "0"], "--brokers"),
        (["--brokers", "3", "--base-port", "65534"], "leaves no port for broker 2"),
        (["--brokers", "3", "--base-port", "9092", "--zookeeper-port", "9093"], "is one of the brokers' ports"),
        (["--zookeeper-port", "70000"], "a port is between 1 and 65535"),
    ],
)
def test_usage_errors_are_one_line_and_exit_two(tmp_path, args, fragment) -> None:
    result = spate("cluster", "up", "--data-dir", str(tmp_path / "cluster"), *args)
    assert_one_line_failure(result, 2, fragment)
    assert not (tmp_path / "cluster").exists()


def test_data_dir_is_required(tmp_path) -> None:
    assert_one_line_failure(spate("cluster", "up"), 2, "--data-dir")


# --- a real cluster -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def three_brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterUp]:
    cluster = ClusterUp(tmp_path_factory.mktemp("three") / "cluster", brokers=3, extra=("--no-status",)).start()
    try:
        cluster.wait_up()
        with Admin(cluster.bootstrap, default_api_timeout_ms=30_000) as admin:
            wait_until(lambda: len(admin.describe_cluster().brokers) == 3, "all three brokers in the cluster", 60)
        yield cluster
        assert cluster.stop() == 0, cluster.stderr
    finally:
        cluster.kill()


def create_topic(bootstrap: str, name: str, partitions: int, replication_factor: int = 1) -> None:
    with Admin(bootstrap, default_api_timeout_ms=30_000) as admin:
        admin.create_topics(NewTopic(name, num_partitions=partitions, replication_factor=replication_factor))
        wait_until(lambda: all(p.leader >= 0 for p in admin.describe_topics([name])[name].partitions),
                   f"leaders for {name}", 30)


def describe(bootstrap: str, topic: str) -> dict:
    result = spate("topics", "describe", topic, "--output", "json", bootstrap=bootstrap)
    assert result.returncode == 0, result
    return json_lines(result.stdout)[0]


def create_replicated_topic(bootstrap: str, name: str) -> None:
    """A topic of replication factor 2, or a skip where the cluster takes only 1 yet."""
    try:
        create_topic(bootstrap, name, 1, replication_factor=2)
    except AdminError as exc:
        if exc.code != ErrorCode.INVALID_REPLICATION_FACTOR:
            raise
        pytest.skip(f"the cluster does not take replication factor 2 yet: {exc}")


@pytest.fixture(scope="module")
def replication(three_brokers) -> None:
    """Skip unless followers copy their leader's records (a replica on another broker can catch up)."""
    create_replicated_topic(three_brokers.bootstrap, "replicated")
    leader, follower = describe(three_brokers.bootstrap, "replicated")["partitions"][0]["replicas"]
    with Producer(three_brokers.bootstrap, acks=1, enable_idempotence=False) as producer:
        producer.send("replicated", b"copied?", partition=0).result(30)
    follower_log = three_brokers.data_dir / f"broker-{follower}" / "replicated-0"

    def copied() -> bool:
        return any(f.stat().st_size > 0 for f in follower_log.glob("*.log")) if follower_log.is_dir() else False

    try:
        wait_until(copied, "the follower's copy", 20)
    except AssertionError:
        pytest.skip(f"followers do not copy their leader's records yet: broker {follower} has no data of "
                    f"replicated-0 20s after broker {leader} took a record")


def test_one_cluster_broker_starts_and_stops(tmp_path, launched) -> None:
    cluster = launch(launched, tmp_path / "cluster", "--no-status")
    assert cluster.wait_up() == cluster.bootstrap
    with Admin(cluster.bootstrap, default_api_timeout_ms=30_000) as admin:
        wait_until(lambda: admin.describe_cluster().controller_id == 0, "broker 0 to be the controller", 30)
        assert [b.node_id for b in admin.describe_cluster().brokers] == [0]
    assert cluster.stop() == 0, cluster.stderr
    assert_all_stopped(cluster)


def test_cluster_describe_lists_the_three_brokers_and_one_controller(three_brokers) -> None:
    result = spate("cluster", "describe", "--output", "json", bootstrap=three_brokers.bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    assert [(b["id"], b["port"], b["alive"]) for b in document["brokers"]] == [
        (i, three_brokers.base_port + i, True) for i in range(3)
    ]
    assert document["controller"]["id"] in (0, 1, 2)
    table = spate("cluster", "describe", bootstrap=three_brokers.bootstrap)
    assert table_row(table.stdout, str(document["controller"]["id"]))[-1] == "yes"
    assert "Controller epoch: unknown" in table.stdout
    zookeeper = f"127.0.0.1:{three_brokers.zookeeper_port}"
    with_epoch = spate("cluster", "describe", "--output", "json", "--zookeeper", zookeeper,
                       bootstrap=three_brokers.bootstrap)
    assert json_lines(with_epoch.stdout)[0]["controller_epoch"] >= 1


def test_cluster_describe_names_a_zookeeper_it_cannot_read_in_one_line(three_brokers, refused_address) -> None:
    result = spate("cluster", "describe", "--zookeeper", refused_address, "--api-timeout-ms", "2000",
                   bootstrap=three_brokers.bootstrap)
    assert_one_line_failure(result, 1, "cannot read the controller epoch from ZooKeeper at " + refused_address)


def test_a_new_topic_has_leaders_on_every_broker(three_brokers) -> None:
    create_topic(three_brokers.bootstrap, "spread", 6)
    result = spate("cluster", "describe", "--output", "json", bootstrap=three_brokers.bootstrap)
    [topic] = [t for t in json_lines(result.stdout)[0]["topics"] if t["name"] == "spread"]
    assert topic["partitions"] == 6 and topic["leaderless"] == 0
    assert set(topic["leaders"]) == {"0", "1", "2"}


def test_reassigning_a_partition_to_the_replicas_it_has_completes_at_once(three_brokers) -> None:
    create_topic(three_brokers.bootstrap, "staying", 1)
    replicas = describe(three_brokers.bootstrap, "staying")["partitions"][0]["replicas"]
    result = spate("topics", "reassign", "--topic", "staying", "--partition", "0",
                   "--replicas", ",".join(map(str, replicas)), "--wait", "--wait-timeout-ms", "30000",
                   bootstrap=three_brokers.bootstrap)
    assert result.returncode == 0, result
    assert describe(three_brokers.bootstrap, "staying")["partitions"][0]["replicas"] == replicas
    assert spate("topics", "reassign", "--list", bootstrap=three_brokers.bootstrap).stdout == (
        "No reassignment in progress.\n"
    )


def test_reordered_replicas_then_a_preferred_election_move_the_leader(three_brokers) -> None:
    create_replicated_topic(three_brokers.bootstrap, "reordered")
    before = describe(three_brokers.bootstrap, "reordered")["partitions"][0]
    first, second = before["replicas"]
    assert before["leader"] == first
    reordered = spate("topics", "reassign", "--topic", "reordered", "--partition", "0",
                      "--replicas", f"{second},{first}", "--wait", "--wait-timeout-ms", "30000",
                      bootstrap=three_brokers.bootstrap)
    assert reordered.returncode == 0, reordered
    assert describe(three_brokers.bootstrap, "reordered")["partitions"][0]["replicas"] == [second, first]
    elected = spate("topics", "elect-leaders", "--preferred", "--topic", "reordered", "--output", "json",
                    bootstrap=three_brokers.bootstrap)
    assert elected.returncode == 0, elected
    assert json_lines(elected.stdout)[0]["elected"] == [{"topic": "reordered", "partition": 0}]
    assert describe(three_brokers.bootstrap, "reordered")["partitions"][0]["leader"] == second
    again = spate("topics", "elect-leaders", "--preferred", "--topic", "reordered", "--partition", "0",
                  bootstrap=three_brokers.bootstrap)
    assert again.stdout == "A valid leader was already elected for 1 partition(s): reordered-0\n"


def test_preferred_election_where_the_preferred_replicas_lead_changes_nothing(three_brokers) -> None:
    create_topic(three_brokers.bootstrap, "preferred", 3)
    result = spate("topics", "elect-leaders", "--preferred", "--topic", "preferred", "--output", "json",
                   bootstrap=three_brokers.bootstrap)
    assert result.returncode == 0, result
    [document] = json_lines(result.stdout)
    assert document["elected"] == []
    assert sorted(p["partition"] for p in document["not_needed"]) == [0, 1, 2]


def test_reassign_moves_a_partition_to_another_broker_and_waits(three_brokers, replication) -> None:
    create_topic(three_brokers.bootstrap, "moving", 1)
    [source] = describe(three_brokers.bootstrap, "moving")["partitions"][0]["replicas"]
    target = (source + 1) % 3
    moved = spate("topics", "reassign", "--topic", "moving", "--partition", "0", "--replicas", str(target),
                  "--wait", "--wait-timeout-ms", "60000", bootstrap=three_brokers.bootstrap)
    assert moved.returncode == 0, moved
    after = describe(three_brokers.bootstrap, "moving")["partitions"][0]
    assert after["replicas"] == [target] and after["leader"] == target
    listed = spate("topics", "reassign", "--list", bootstrap=three_brokers.bootstrap)
    assert listed.stdout == "No reassignment in progress.\n"


def test_alter_config_on_the_cluster_sets_and_deletes_a_key(three_brokers) -> None:
    create_topic(three_brokers.bootstrap, "configured", 1)
    altered = spate("topics", "alter-config", "configured", "--config", "retention.ms=123456",
                    bootstrap=three_brokers.bootstrap)
    assert altered.returncode == 0, altered
    assert describe(three_brokers.bootstrap, "configured")["configs"]["retention.ms"]["value"] == "123456"
    deleted = spate("topics", "alter-config", "configured", "--delete-config", "retention.ms",
                    bootstrap=three_brokers.bootstrap)
    assert deleted.returncode == 0, deleted
    assert "retention.ms" not in describe(three_brokers.bootstrap, "configured")["configs"]
