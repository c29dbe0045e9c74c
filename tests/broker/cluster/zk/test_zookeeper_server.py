"""The ZooKeeper server launcher: a real server from the pyspark jars, and one-line errors when it cannot start."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from broker_core.cluster.zk.errors import ZooKeeperServerError
from broker_core.cluster.zk.server import ZooKeeperServer, four_letter_word
from broker_core.cluster.zk.server_files import (
    REQUIRED_JARS,
    ZooKeeperServerConfig,
    find_java,
    zookeeper_classpath,
)
from tests.support.ports import free_port
from tests.support.zookeeper import TEST_JVM_OPTIONS


def server(tmp_path: Path, **kwargs) -> ZooKeeperServer:
    config = ZooKeeperServerConfig(tmp_path / "data", port=free_port())
    kwargs.setdefault("jvm_options", TEST_JVM_OPTIONS)
    return ZooKeeperServer(config, log_path=tmp_path / "zookeeper.log", **kwargs)


def assert_one_line(error: ZooKeeperServerError) -> None:
    assert str(error) and "\n" not in str(error)


def test_a_server_starts_answers_restarts_on_its_data_and_stops_on_sigterm(tmp_path: Path) -> None:
    from kazoo.client import KazooClient

    zookeeper = server(tmp_path).start()
    try:
        assert zookeeper.is_serving()
        assert four_letter_word("127.0.0.1", zookeeper.config.port, "ruok") == "imok"
        assert "Zookeeper version: 3.9.5" in four_letter_word("127.0.0.1", zookeeper.config.port, "srvr")
        client = KazooClient(zookeeper.connect_string)
        client.start(timeout=10)
        client.create("/kept", b"data")
        client.stop()
        client.close()

        zookeeper.restart()
        client = KazooClient(zookeeper.connect_string)
        client.start(timeout=10)
        assert client.get("/kept")[0] == b"data"
        client.stop()
        client.close()
    finally:
        code = zookeeper.stop()
    assert code == 143  # the JVM's exit after a clean SIGTERM shutdown
    assert not zookeeper.running
    config = (tmp_path / "data" / "zoo.cfg").read_text()
    assert f"clientPort={zookeeper.config.port}" in config and "admin.enableServer=false" in config
    assert "4lw.commands.whitelist=ruok,srvr,mntr" in config
    # The quiet log: one line per event, no stack traces.
    lines = (tmp_path / "zookeeper.log").read_text().splitlines()
    assert lines and all(line[:4].isdigit() and " zookeeper " in line for line in lines)


def test_the_classpath_is_found_by_name_pattern_not_version() -> None:
    jars = zookeeper_classpath()
    names = [jar.name for jar in jars]
    assert len(jars) == len(REQUIRED_JARS)
    assert any(name.startswith("zookeeper-3.") for name in names)
    assert not any(name.startswith("netty-handler-proxy") for name in names)


def test_missing_jars_are_named_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "zookeeper-3.9.5.jar").write_bytes(b"")
    with pytest.raises(ZooKeeperServerError, match=f"ZooKeeper jars missing from {tmp_path}: zookeeper-jute-\\*.jar, ") as info:
        server(tmp_path / "server", jars_dir=tmp_path).start()
    assert_one_line(info.value)


def test_a_missing_java_is_one_line(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(ZooKeeperServerError, match="Java runtime '/nowhere/java' not found") as info:
        server(tmp_path, java="/nowhere/java").start()
    assert_one_line(info.value)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(ZooKeeperServerError, match="no Java runtime: 'java' is not on PATH and JAVA_HOME is not set"):
        find_java()


def test_a_taken_port_is_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        zookeeper = ZooKeeperServer(ZooKeeperServerConfig(tmp_path / "data", port=port), log_path=tmp_path / "zk.log")
        with pytest.raises(ZooKeeperServerError, match=f"cannot listen on 127.0.0.1:{port}: Address already in use") as info:
            zookeeper.start()
    assert_one_line(info.value)
    assert not zookeeper.running


def test_a_process_that_dies_while_starting_is_reported(tmp_path: Path) -> None:
    zookeeper = server(tmp_path, jvm_options=("-Xmx1k",))  # the JVM refuses to start
    with pytest.raises(ZooKeeperServerError, match=r"ZooKeeper exited with code \d+ while starting") as info:
        zookeeper.start()
    assert_one_line(info.value)


def test_sasl_users_turn_on_the_sasl_provider_and_a_jaas_server_section(tmp_path: Path) -> None:
    config = ZooKeeperServerConfig(tmp_path / "data", sasl_users={"kafka": 'kafka"secret'})
    config.write_files()
    assert "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider" in config.render()
    assert config.jvm_system_properties() == [f"-Djava.security.auth.login.config={config.jaas_path.resolve()}"]
    assert config.jaas_path.read_text() == (
        "Server {\n"
        "  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        '    user_kafka="kafka\\"secret";\n'
        "};\n"
    )
    assert config.jaas_path.stat().st_mode & 0o077 == 0  # passwords: the owner's alone
    assert "secret" not in repr(config)


def test_without_sasl_users_there_is_no_jaas_file(tmp_path: Path) -> None:
    config = ZooKeeperServerConfig(tmp_path / "data")
    assert "authProvider" not in config.render()
    assert config.jaas_path is None and config.jvm_system_properties() == []


def test_an_operators_jaas_file_turns_on_sasl_as_it_is(tmp_path: Path) -> None:
    jaas = tmp_path / "zookeeper_jaas.conf"
    config = ZooKeeperServerConfig(tmp_path / "data", jaas_file=jaas)
    config.write_files()
    assert "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider" in config.render()
    assert config.jvm_system_properties() == [f"-Djava.security.auth.login.config={jaas.resolve()}"]
    assert not jaas.exists()  # not written: it is the operator's
    with pytest.raises(ValueError, match="not both"):
        ZooKeeperServerConfig(tmp_path / "data", sasl_users={"kafka": "pw"}, jaas_file=jaas)
