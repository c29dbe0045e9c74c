"""What a ZooKeeper server process needs on disk: a Java runtime, the jars, ``zoo.cfg``, log4j2.

The jars ship inside the pyspark wheel (``<pyspark>/jars``); they are found by
name pattern, never by version, so a pyspark upgrade that moves ZooKeeper or
netty along keeps working. pyspark is located with ``importlib.util.find_spec``,
which finds the package without importing it (the broker never imports Spark).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from broker_core.cluster.zk.errors import ZooKeeperServerError

MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"
CONFIG_FILE_NAME = "zoo.cfg"
LOG_CONFIG_FILE_NAME = "log4j2.properties"
JAAS_FILE_NAME = "zookeeper_jaas.conf"
SASL_AUTH_PROVIDER = "org.apache.zookeeper.server.auth.SASLAuthenticationProvider"
DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
FOUR_LETTER_WORDS = ("ruok", "srvr", "mntr")

# Artifact names followed by "-<version>.jar"; "[0-9]" keeps "netty-handler" from matching "netty-handler-proxy".
REQUIRED_JARS = (
    "zookeeper",
    "zookeeper-jute",
    "netty-handler",
    "netty-common",
    "netty-buffer",
    "netty-transport",
    "netty-transport-native-unix-common",
    "netty-codec-base",
    "netty-resolver",
    "slf4j-api",
    "log4j-slf4j2-impl",
    "log4j-api",
    "log4j-core",
    "metrics-core",
    "commons-io",
    "snappy-java",
)

# One line per event: messages and exceptions are folded onto the line. ZooKeeper's own start-up
# chatter stays at WARN; the lines saying where it serves from stay at INFO.
_LOG_CONFIG = """\
status = warn
name = SpateZooKeeper

appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.alwaysWriteExceptions = false
appender.console.layout.pattern = %d{ISO8601} %-5level zookeeper %c{1}: %replace{%m}{[\\r\\n]+}{ }%notEmpty{ (%replace{%ex{short.message}}{[\\r\\n]+}{ })}%n

rootLogger.level = warn
rootLogger.appenderRef.console.ref = console

logger.main.name = org.apache.zookeeper.server.ZooKeeperServerMain
logger.main.level = info
logger.bind.name = org.apache.zookeeper.server.NIOServerCnxnFactory
logger.bind.level = info
# Expected here, not worth a warning: "running in standalone mode" and "maxCnxns is not configured".
logger.quorum.name = org.apache.zookeeper.server.quorum.QuorumPeerMain
logger.quorum.level = error
logger.cnxns.name = org.apache.zookeeper.server.ServerCnxnFactory
logger.cnxns.level = error
"""


@dataclass(frozen=True)
class ZooKeeperServerConfig:
    """A standalone ZooKeeper server: where it keeps its data and where it listens.

    ``tick_time_ms`` is ZooKeeper's time unit, and the granularity of session
    expiry: a dead broker's session ends within a tick of its timeout, so a
    short tick keeps controller failover close to ``zookeeper.session.timeout.ms``.
    Sessions may last ``min_session_timeout_ms`` to ``max_session_timeout_ms``
    (1 s to 40 s), which covers Kafka's 18 s default.

    ``sasl_users`` (user name to password) turns on SASL DIGEST-MD5: the
    server loads ZooKeeper's SASL authentication provider and a JAAS file
    written next to ``zoo.cfg`` whose ``Server`` section lists the users;
    ``jaas_file`` does the same with a JAAS file of the operator's. Clients
    that do not authenticate may still connect; znode ACLs decide what they
    may do.
    """

    data_dir: Path
    port: int = 2181
    host: str = "127.0.0.1"
    tick_time_ms: int = 500
    min_session_timeout_ms: int = 1000
    max_session_timeout_ms: int = 40_000
    sasl_users: dict[str, str] = field(default_factory=dict, repr=False)
    jaas_file: Path | None = None

    def __post_init__(self) -> None:
        if self.sasl_users and self.jaas_file is not None:
            raise ValueError("give SASL users or a JAAS file, not both")

    @property
    def connect_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    @property
    def config_path(self) -> Path:
        return self.data_dir / CONFIG_FILE_NAME

    @property
    def log_config_path(self) -> Path:
        return self.data_dir / LOG_CONFIG_FILE_NAME

    @property
    def jaas_path(self) -> Path | None:
        """The JAAS file with the ``Server`` section, when SASL is on."""
        if self.jaas_file is not None:
            return self.jaas_file
        return self.data_dir / JAAS_FILE_NAME if self.sasl_users else None

    def jvm_system_properties(self) -> list[str]:
        """The ``-D`` options the server needs for this configuration."""
        if self.jaas_path is None:
            return []
        return [f"-Djava.security.auth.login.config={self.jaas_path.resolve()}"]

    def render_jaas(self) -> str:
        """The ``Server`` section: ZooKeeper's digest login module with a ``user_<name>`` option per user."""
        users = "".join(f'\n    user_{name}="{_jaas_quote(password)}"' for name, password in self.sasl_users.items())
        return f"Server {{\n  {DIGEST_LOGIN_MODULE} required{users};\n}};\n"

    def render(self) -> str:
        """``zoo.cfg`` for this server: standalone, no admin HTTP server, a few four-letter words."""
        lines = [
            f"tickTime={self.tick_time_ms}",
            f"minSessionTimeout={self.min_session_timeout_ms}",
            f"maxSessionTimeout={self.max_session_timeout_ms}",
            f"dataDir={self.data_dir.resolve()}",
            f"clientPort={self.port}",
            f"clientPortAddress={self.host}",
            "admin.enableServer=false",
            f"4lw.commands.whitelist={','.join(FOUR_LETTER_WORDS)}",
        ]
        if self.jaas_path is not None:
            lines.append(f"authProvider.sasl={SASL_AUTH_PROVIDER}")
        return "\n".join(lines) + "\n"

    def write_files(self) -> None:
        """Create the data directory and write ``zoo.cfg`` and the log4j2 config into it."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self.config_path.write_text(self.render(), encoding="utf-8")
            self.log_config_path.write_text(_LOG_CONFIG, encoding="utf-8")
            if self.sasl_users:
                # Passwords: readable by the owner only.
                self.jaas_path.touch(mode=0o600)
                self.jaas_path.chmod(0o600)
                self.jaas_path.write_text(self.render_jaas(), encoding="utf-8")
        except OSError as exc:
            raise ZooKeeperServerError(f"cannot write ZooKeeper's config in {self.data_dir}: {exc.strerror or exc}") from None


def _jaas_quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def find_java(java: str | None = None) -> str:
    """The ``java`` to run: the one given, else ``$JAVA_HOME/bin/java``, else ``java`` on ``PATH``."""
    if java is not None:
        if shutil.which(java) is None:
            raise ZooKeeperServerError(f"Java runtime {java!r} not found; ZooKeeper needs Java (17, as Spark)")
        return java
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = Path(java_home) / "bin" / "java"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("java")
    if found is None:
        raise ZooKeeperServerError(
            "no Java runtime: 'java' is not on PATH and JAVA_HOME is not set; ZooKeeper needs Java (17, as Spark)"
        )
    return found


def default_jars_dir() -> Path:
    """``<pyspark package>/jars``, found without importing pyspark."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ZooKeeperServerError("the ZooKeeper jars ship with pyspark, which is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def zookeeper_classpath(jars_dir: Path | None = None) -> list[Path]:
    """The jars ZooKeeper runs from, one per artifact (the last by name if several versions are present)."""
    directory = jars_dir if jars_dir is not None else default_jars_dir()
    found: list[Path] = []
    missing: list[str] = []
    for artifact in REQUIRED_JARS:
        matches = sorted(directory.glob(f"{artifact}-[0-9]*.jar"))
        if matches:
            found.append(matches[-1])
        else:
            missing.append(f"{artifact}-*.jar")
    if missing:
        raise ZooKeeperServerError(f"ZooKeeper jars missing from {directory}: {', '.join(missing)}")
    return found
