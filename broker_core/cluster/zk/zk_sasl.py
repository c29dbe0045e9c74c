"""The broker's SASL login to ZooKeeper, configured the way Kafka's is.

Kafka's ZooKeeper client reads three JVM system properties; Spate takes them
as broker properties with the same names:

* ``java.security.auth.login.config``: the JAAS file;
* ``zookeeper.sasl.clientconfig``: the section of that file to log in with
  (default ``Client``);
* ``zookeeper.sasl.client``: ``false`` turns SASL off (default ``true``).

As in Kafka (``JaasUtils.isZkSaslEnabled``), SASL is on when the JAAS file
has that section, and a section present while ``zookeeper.sasl.client`` is
``false`` is an error. The section must use ZooKeeper's
``DigestLoginModule``: the login is SASL DIGEST-MD5 with its ``username`` and
``password``. Kerberos (GSSAPI) is not supported.

``zookeeper.set.acl=true`` needs the login (Kafka refuses to start without
it): the ACLs it sets name the authenticated user.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from broker_core.cluster.zk.jaas_file import JaasFileError, read_jaas_file
from broker_core.config.broker_config import BrokerConfig
from broker_core.config.errors import ConfigError

JAAS_FILE_PROPERTY = "java.security.auth.login.config"
SASL_CLIENT_PROPERTY = "zookeeper.sasl.client"
LOGIN_CONTEXT_PROPERTY = "zookeeper.sasl.clientconfig"
SET_ACL_PROPERTY = "zookeeper.set.acl"
DEFAULT_LOGIN_CONTEXT = "Client"
DIGEST_LOGIN_MODULE = "org.apache.zookeeper.server.auth.DigestLoginModule"
MECHANISM = "DIGEST-MD5"
# What a ZooKeeper server needs to accept these logins (named when one is rejected).
SERVER_SASL_SETTINGS = (
    "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider and a JAAS Server section"
)


@dataclass(frozen=True)
class ZkSaslLogin:
    """The credentials of one JAAS section, and where they came from (for messages)."""

    username: str
    password: str
    jaas_file: Path
    section: str = DEFAULT_LOGIN_CONTEXT

    def kazoo_sasl_options(self) -> dict[str, str]:
        """kazoo's ``sasl_options`` (DIGEST-MD5 through pure-sasl)."""
        return {"mechanism": MECHANISM, "username": self.username, "password": self.password}

    @property
    def describe(self) -> str:
        return f"SASL {MECHANISM} user {self.username!r} (section {self.section} of JAAS file {self.jaas_file})"

    def __repr__(self) -> str:  # never show the password
        return f"ZkSaslLogin({self.username!r}, jaas_file={str(self.jaas_file)!r}, section={self.section!r})"


def login_from_jaas_file(jaas_file: Path, section: str = DEFAULT_LOGIN_CONTEXT) -> ZkSaslLogin | None:
    """The login in ``section`` of ``jaas_file``, ``None`` if the file has no such section.

    Raises :class:`ConfigError` naming ``java.security.auth.login.config`` and
    the file when the file is missing or malformed, or the section is not a
    digest login with a username and a password.
    """
    try:
        entries = read_jaas_file(jaas_file).section(section)
    except JaasFileError as exc:
        raise ConfigError(str(exc), key=JAAS_FILE_PROPERTY, value=str(jaas_file)) from None
    if entries is None:
        return None
    entry = entries[0]
    if entry.login_module != DIGEST_LOGIN_MODULE:
        raise ConfigError(
            f"section {section} of {jaas_file} uses {entry.login_module}; the ZooKeeper login supports "
            f"{DIGEST_LOGIN_MODULE} (SASL {MECHANISM}) only", key=JAAS_FILE_PROPERTY, value=str(jaas_file),
        )
    missing = [option for option in ("username", "password") if not entry.options.get(option)]
    if missing:
        raise ConfigError(
            f"section {section} of {jaas_file} has no {' and no '.join(missing)}",
            key=JAAS_FILE_PROPERTY, value=str(jaas_file),
        )
    return ZkSaslLogin(entry.options["username"], entry.options["password"], jaas_file, section)


def zk_sasl_login(config: BrokerConfig) -> ZkSaslLogin | None:
    """The broker's ZooKeeper login, or ``None`` when SASL is off; checks ``zookeeper.set.acl`` needs one."""
    jaas_setting = config.get_optional_str(JAAS_FILE_PROPERTY)
    section = config.get_str(LOGIN_CONTEXT_PROPERTY)
    sasl_enabled = config.get_bool(SASL_CLIENT_PROPERTY)
    login = login_from_jaas_file(Path(jaas_setting), section) if jaas_setting else None
    if login is not None and not sasl_enabled:
        raise ConfigError(
            f"is false, which disables SASL to ZooKeeper, but JAAS file {jaas_setting} has a {section} section; "
            f"remove one of them", key=SASL_CLIENT_PROPERTY,
        )
    if config.get_bool(SET_ACL_PROPERTY) and login is None:
        where = (f"JAAS file {jaas_setting} has no {section} section" if jaas_setting
                 else f"{JAAS_FILE_PROPERTY} is not set")
        raise ConfigError(
            f"is true, but the broker does not authenticate to ZooKeeper ({where}); set "
            f"{JAAS_FILE_PROPERTY} to a JAAS file with a {section} section using {DIGEST_LOGIN_MODULE}",
            key=SET_ACL_PROPERTY,
        )
    return login
