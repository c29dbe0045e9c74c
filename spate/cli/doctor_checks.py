"""The checks of ``spate doctor``: each returns a ``Check`` with what it found and, on failure, the fix."""

from __future__ import annotations

import os
import pkgutil
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

MIN_JAVA_VERSION = 17
# Below this a log dir is reported: segments are 1 GiB by default (log.segment.bytes).
MIN_FREE_BYTES = 1 << 30
_JAVA_VERSION = re.compile(r'version "(\d+)(?:\.(\d+))?')


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str | None = None

    def document(self) -> dict[str, object]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail, "fix": self.fix}


def java_major_version(version_output: str) -> int | None:
    """The major version in ``java -version`` output: ``"17.0.15"`` is 17, the old ``"1.8.0_392"`` is 8."""
    match = _JAVA_VERSION.search(version_output)
    if match is None:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def check_java(java: str | None = None) -> Check:
    fix = f"install Java {MIN_JAVA_VERSION} or newer (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
    java = java or find_java()
    if java is None:
        return Check("java", False, "no java on PATH and JAVA_HOME unset", fix)
    try:
        result = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Check("java", False, f"{java} -version failed: {exc}", fix)
    major = java_major_version(result.stderr + result.stdout)
    if major is None:
        return Check("java", False, f"cannot tell the version of {java}", fix)
    if major < MIN_JAVA_VERSION:
        return Check("java", False, f"{java} is Java {major}; Spark and ZooKeeper need {MIN_JAVA_VERSION}+", fix)
    return Check("java", True, f"Java {major} at {java}")


def check_pyspark() -> Check:
    """Importable, without importing it here (the command stays light): found on sys.path, with its version."""
    from importlib.metadata import PackageNotFoundError, version
    from importlib.util import find_spec

    fix = "run `bash platform/setup.sh`, or `pip install -e .` in this interpreter's environment"
    if find_spec("pyspark") is None:
        return Check("pyspark", False, f"pyspark is not importable by {sys.executable}", fix)
    try:
        return Check("pyspark", True, f"pyspark {version('pyspark')}")
    except PackageNotFoundError:
        return Check("pyspark", True, "pyspark (version unknown: no package metadata)")


def check_spark_finds_spate(module_names: Iterable[str] | None = None,
                            pyspark_python: str | None = None) -> Check:
    """What Spark's data source lookup sees: ``pyspark_spate`` on the module scan, and PYSPARK_PYTHON set."""
    fix = "run `bash platform/setup.sh`, or `.venv/bin/python platform/project_path.py` in the project directory"
    names = set(module_names) if module_names is not None else {m.name for m in pkgutil.iter_modules()}
    if "pyspark_spate" not in names:
        return Check("spark data source", False, "pyspark_spate is not on sys.path: format(\"spate\") is not found "
                     "outside the project directory", fix)
    python = pyspark_python if pyspark_python is not None else os.environ.get("PYSPARK_PYTHON")
    if not python:
        return Check("spark data source", False, "PYSPARK_PYTHON is unset: Spark's workers run `python3` from PATH",
                     fix)
    return Check("spark data source", True, f"format(\"spate\") found; Spark's workers run {python}")


def listener_address(listener: str) -> tuple[str, int]:
    """``("127.0.0.1", 9092)`` of ``PLAINTEXT://127.0.0.1:9092`` (an empty host binds every interface)."""
    rest = listener.split("://", 1)[-1].rstrip("/")
    host, _, port = rest.rpartition(":")
    return host.strip("[]") or "0.0.0.0", int(port)


def check_port(name: str, host: str, port: int, *, timeout_s: float = 3.0) -> Check:
    """Free to bind, or already serving a Kafka-protocol broker (one of Spate's, running)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
            return Check(f"port {name}", True, f"{host}:{port} is free")
        except OSError as exc:
            bind_error = exc
    if _answers_api_versions(host, port, timeout_s):
        return Check(f"port {name}", True, f"{host}:{port} is served by a running broker")
    return Check(f"port {name}", False, f"{host}:{port} cannot be bound ({bind_error.strerror}) and no broker answers there",
                 f"stop the process on port {port} (`ss -ltnp 'sport = :{port}'` names it) or choose another port "
                 f"in the setting {name!r}")


def _answers_api_versions(host: str, port: int, timeout_s: float) -> bool:
    from spate.client import Admin
    from spate.client.errors import ClientError, KafkaError

    address = f"{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    try:
        with Admin(address, default_api_timeout_ms=int(timeout_s * 1000), request_timeout_ms=int(timeout_s * 1000)) as admin:
            admin.describe_cluster()
        return True
    except (ClientError, KafkaError, OSError):
        return False


def check_log_dir(path: Path, *, min_free_bytes: int = MIN_FREE_BYTES) -> Check:
    name = f"log dir {path}"
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        return Check(name, False, f"{existing} is not a directory", f"choose another directory in log.dirs than {path}")
    if not os.access(existing, os.W_OK | os.X_OK):
        return Check(name, False, f"{existing} is not writable by this user",
                     f"`chown` {existing} to the user running the broker, or choose another directory in log.dirs")
    free = shutil.disk_usage(existing).free
    if free < min_free_bytes:
        return Check(name, False, f"only {free / (1 << 20):.0f} MiB free on {existing}",
                     f"free space (at least {min_free_bytes / (1 << 30):.0f} GiB) or move log.dirs to a larger disk")
    state = "writable" if existing == path else f"to be created in {existing}"
    return Check(name, True, f"{state}, {free / (1 << 30):.1f} GiB free")


def check_zookeeper(connect: str, *, timeout_s: float = 3.0) -> Check:
    """Reachable when any server of the connect string accepts a TCP connection."""
    servers = connect.split("/", 1)[0].split(",")
    failures = []
    for server in servers:
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host or "127.0.0.1", int(port or 2181)), timeout=timeout_s):
                return Check("zookeeper", True, f"{server.strip()} accepts connections")
        except (OSError, ValueError) as exc:
            failures.append(f"{server.strip()}: {exc}")
    return Check("zookeeper", False, f"no server of zookeeper.connect={connect} is reachable ({'; '.join(failures)})",
                 "start ZooKeeper (`spate zookeeper start --data-dir DIR`) or correct zookeeper.connect")


def check_broker(bootstrap: str, *, timeout_s: float = 5.0) -> list[Check]:
    """The broker's cluster (controller, brokers and their listeners) and the APIs it offers."""
    from spate.client import Admin
    from spate.client.errors import ClientError, KafkaError

    timeout_ms = int(timeout_s * 1000)
    try:
        with Admin(bootstrap, default_api_timeout_ms=timeout_ms, request_timeout_ms=timeout_ms,
                   client_id="spate-doctor") as admin:
            cluster = admin.describe_cluster()
            network = admin._network  # the negotiated ApiVersions of the bootstrap connection
            connection = network.connect(network.any_node(), time.monotonic() + timeout_s)
            versions = dict(connection.versions)
    except (ClientError, KafkaError, OSError) as exc:
        return [Check("broker", False, f"{bootstrap} does not answer: {str(exc).splitlines()[0]}",
                      "start the broker (`spate broker start`) or correct --bootstrap-server")]
    listeners = ", ".join(f"{b.node_id}@{b.host}:{b.port}" for b in cluster.brokers)
    controller = cluster.controller_id if cluster.controller_id >= 0 else "none"
    checks = [Check("broker", True, f"cluster {cluster.cluster_id or '?'}: brokers {listeners}, controller {controller}")]
    from spate.protocol.api_keys import ApiKey

    missing = [key.name for key in (ApiKey.PRODUCE, ApiKey.FETCH, ApiKey.METADATA) if key not in versions]
    if missing:
        checks.append(Check("broker apis", False, f"the broker lacks {', '.join(missing)}",
                            "upgrade the broker: these are needed by every client"))
    else:
        produce, fetch = versions[ApiKey.PRODUCE], versions[ApiKey.FETCH]
        checks.append(Check("broker apis", True, f"{len(versions)} APIs; Produce v{produce.min}-{produce.max}, "
                                                 f"Fetch v{fetch.min}-{fetch.max}"))
    return checks
