"""The broker's loaded configuration and how it is loaded.

Layers, lowest precedence first: the defaults in
:data:`~broker_core.config.broker_properties.BROKER_PROPERTIES`, the
properties file, then ``--override key=value`` arguments. Every value is
parsed and validated while loading, so a :class:`BrokerConfig` that exists is
a valid one; values are read with the typed getters under Kafka's names
(``config.get_int("log.segment.bytes")``), and settings that Kafka derives
from several properties have their own attributes (``log_retention_ms``,
``listeners``, ``node_id`` ...).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence, TypeVar, cast

from broker_core.config.broker_properties import BROKER_PROPERTIES, LISTENER_PROPERTIES
from broker_core.config.config_source import EffectiveValue
from broker_core.config.definitions import ConfigValue, InvalidValue, PropertyDef, PropertyType, render_value
from broker_core.config.deprecated_configs import is_ignored_broker_property
from broker_core.config.errors import ConfigError
from broker_core.config.listeners import Listener, parse_protocol_map, resolve_listeners
from broker_core.config.properties_file import read_properties_file
from broker_core.config.security_properties import LISTENER_PREFIX, listener_key, listener_property_base
from broker_core.config.zookeeper import ZkConnectString, parse_zookeeper_connect
from spate.protocol.messages.describe_configs import ConfigSource

OVERRIDE_ORIGIN = "--override"
_MS_PER_MINUTE = 60_000
_MS_PER_HOUR = 3_600_000
_T = TypeVar("_T")


@dataclass(frozen=True)
class _Setting:
    """A raw value and where it was written, for error messages."""

    key: str
    text: str
    path: Path | None = None
    line: int | None = None
    origin: str | None = None

    def error(self, message: str) -> ConfigError:
        return ConfigError(message, key=self.key, value=self.text, path=self.path, line=self.line, origin=self.origin)


@dataclass(frozen=True)
class BrokerConfig:
    """An immutable, validated broker configuration.

    ``values`` holds every known property (defaults filled in) as its typed
    value; ``explicit`` names the properties that a file or override set.
    Build one with :func:`load_broker_config` or :meth:`from_properties`.
    """

    values: Mapping[str, ConfigValue]
    explicit: frozenset[str]
    path: Path | None = None

    @classmethod
    def from_properties(cls, properties: Mapping[str, str] | None = None, *, origin: str = "config") -> BrokerConfig:
        """Defaults plus ``properties`` (Kafka names to text), validated as a file would be."""
        settings = [_Setting(key, text, origin=origin) for key, text in (properties or {}).items()]
        return _build(settings, path=None)

    # --- typed access by Kafka name -------------------------------------------------

    def get(self, name: str) -> ConfigValue:
        """The typed value of a known property (``None`` when unset with no default)."""
        try:
            return self.values[name]
        except KeyError:
            raise KeyError(f"unknown broker property {name!r}{_suggestion(name, BROKER_PROPERTIES)}") from None

    def get_int(self, name: str) -> int:
        return _expect(self, name, (PropertyType.SHORT, PropertyType.INT, PropertyType.LONG), int)

    def get_optional_int(self, name: str) -> int | None:
        return _expect_optional(self, name, (PropertyType.SHORT, PropertyType.INT, PropertyType.LONG), int)

    def get_float(self, name: str) -> float:
        return _expect(self, name, (PropertyType.DOUBLE,), float)

    def get_bool(self, name: str) -> bool:
        return _expect(self, name, (PropertyType.BOOLEAN,), bool)

    def get_str(self, name: str) -> str:
        return _expect(self, name, (PropertyType.STRING,), str)

    def get_optional_str(self, name: str) -> str | None:
        return _expect_optional(self, name, (PropertyType.STRING,), str)

    def get_list(self, name: str) -> tuple[str, ...]:
        return _expect(self, name, (PropertyType.LIST,), tuple)

    def get_listener_int(self, listener_name: str, name: str) -> int | None:
        """``listener.name.<listener>.<name>`` when set, else None (the listener has no value of its own)."""
        value = self.values.get(listener_key(listener_name, name))
        return value if isinstance(value, int) else None

    def is_set(self, name: str) -> bool:
        """True when a file or override gave ``name`` a value."""
        self.get(name)
        return name in self.explicit

    # --- settings derived from several properties ---------------------------------

    @property
    def node_id(self) -> int:
        """``node.id`` if set, else ``broker.id``."""
        node_id = self.get_optional_int("node.id")
        return node_id if node_id is not None else self.get_int("broker.id")

    @property
    def log_dirs(self) -> tuple[Path, ...]:
        """``log.dirs`` if set, else the single ``log.dir``."""
        dirs = self.get("log.dirs")
        if isinstance(dirs, tuple):
            return tuple(Path(d) for d in dirs)
        return (Path(self.get_str("log.dir")),)

    @property
    def metadata_dir(self) -> Path:
        """Where the embedded metadata store lives: ``metadata.log.dir`` or the first log dir."""
        explicit = self.get_optional_str("metadata.log.dir")
        return Path(explicit) if explicit else self.log_dirs[0]

    @property
    def log_retention_ms(self) -> int:
        """``log.retention.ms``, else minutes, else hours, in ms; -1 (any negative) keeps forever."""
        return _resolve_retention_ms(self.values)

    @property
    def log_roll_ms(self) -> int:
        """``log.roll.ms`` if set, else ``log.roll.hours`` in ms."""
        roll_ms = self.get_optional_int("log.roll.ms")
        return roll_ms if roll_ms is not None else self.get_int("log.roll.hours") * _MS_PER_HOUR

    @property
    def log_flush_interval_ms(self) -> int:
        """``log.flush.interval.ms`` if set, else ``log.flush.scheduler.interval.ms``."""
        flush_ms = self.get_optional_int("log.flush.interval.ms")
        return flush_ms if flush_ms is not None else self.get_int("log.flush.scheduler.interval.ms")

    @property
    def listeners(self) -> tuple[Listener, ...]:
        return resolve_listeners(self.get_list("listeners"), self._protocol_map())

    @property
    def advertised_listeners(self) -> tuple[Listener, ...]:
        """``advertised.listeners`` if set, else ``listeners``.

        A wildcard host falling through from ``listeners`` is left as is; the
        server decides which address to advertise for it.
        """
        advertised = self.get("advertised.listeners")
        if isinstance(advertised, tuple) and advertised:
            return resolve_listeners(advertised, self._protocol_map())
        return self.listeners

    @property
    def inter_broker_listener_name(self) -> str:
        """``inter.broker.listener.name`` if set, else the first listener's name."""
        name = self.get_optional_str("inter.broker.listener.name")
        return name.upper() if name else self.listeners[0].name

    @property
    def zookeeper_connect(self) -> str | None:
        """The ZooKeeper connect string, or ``None`` for the embedded metadata store."""
        connect = self.get_str("zookeeper.connect")
        return connect or None

    @property
    def zookeeper_connect_string(self) -> ZkConnectString | None:
        """``zookeeper.connect`` parsed into servers and chroot, or ``None`` for the embedded store."""
        connect = self.zookeeper_connect
        return parse_zookeeper_connect(connect) if connect is not None else None

    @property
    def zookeeper_session_timeout_ms(self) -> int:
        return self.get_int("zookeeper.session.timeout.ms")

    @property
    def zookeeper_connection_timeout_ms(self) -> int:
        """``zookeeper.connection.timeout.ms`` if set, else the session timeout (as Kafka)."""
        timeout = self.get_optional_int("zookeeper.connection.timeout.ms")
        return timeout if timeout is not None else self.get_int("zookeeper.session.timeout.ms")

    # --- reporting -------------------------------------------------------------

    def describe(self) -> dict[str, EffectiveValue]:
        """Every property's value as text and its source, for DescribeConfigs on a broker."""
        return {
            name: EffectiveValue(
                render_value(self.values[name]),
                ConfigSource.STATIC_BROKER_CONFIG if name in self.explicit else ConfigSource.DEFAULT_CONFIG,
            )
            for name in BROKER_PROPERTIES
        }

    def as_properties(self) -> dict[str, str]:
        """The explicitly set properties as canonical text (enough to rebuild this config)."""
        result: dict[str, str] = {}
        for name in sorted(self.explicit):
            text = render_value(self.values[name])
            if text is not None:
                result[name] = text
        return result

    def _protocol_map(self) -> dict[str, str]:
        return parse_protocol_map(self.get("listener.security.protocol.map"))


def load_broker_config(path: Path | None, overrides: Sequence[str] = ()) -> BrokerConfig:
    """Load ``path`` (if given) and apply ``--override key=value`` strings on top.

    Raises :class:`ConfigError` naming the file (and line), or the override,
    for a missing or unreadable file, a syntax error, an unknown key (with the
    closest known name) or a value of the wrong type or range.
    """
    settings: list[_Setting] = []
    if path is not None:
        for entry in read_properties_file(path):
            settings.append(_Setting(entry.key, entry.value, path=path, line=entry.line))
    settings.extend(_parse_override(text) for text in overrides)
    return _build(settings, path=path)


def _parse_override(text: str) -> _Setting:
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"override {text!r} is not key=value", origin=OVERRIDE_ORIGIN)
    return _Setting(key, value, origin=OVERRIDE_ORIGIN)


def _build(settings: Iterable[_Setting], *, path: Path | None) -> BrokerConfig:
    latest: dict[str, _Setting] = {}
    for setting in settings:  # later settings (file order, then overrides) win
        latest[setting.key] = setting
    values: dict[str, ConfigValue] = {name: d.default for name, d in BROKER_PROPERTIES.items()}
    for key, setting in list(latest.items()):
        definition = BROKER_PROPERTIES.get(key)
        if definition is None and is_ignored_broker_property(key):
            del latest[key]
            continue
        if definition is None:
            definition = _listener_property_def(key)  # a listener.name.<l>. override, parsed as its property
        if definition is None:
            raise setting.error(f"unknown broker property{_suggestion(key, BROKER_PROPERTIES)}")
        values[key] = _parse_setting(definition, setting)
    _check_consistency(values, latest)
    return BrokerConfig(values=MappingProxyType(values), explicit=frozenset(latest), path=path)


def split_listener_key(key: str) -> tuple[str, str] | None:
    """``(LISTENER, property)`` of ``listener.name.<listener>.<property>``; None for another key."""
    if not key.startswith(LISTENER_PREFIX):
        return None
    listener, dot, name = key[len(LISTENER_PREFIX):].partition(".")
    return (listener.upper(), name) if dot and listener and name else None


def _listener_property_def(key: str) -> PropertyDef | None:
    base = listener_property_base(key)
    if base is None:
        split = split_listener_key(key)
        base = split[1] if split is not None and split[1] in LISTENER_PROPERTIES else None
    return BROKER_PROPERTIES[base] if base is not None else None


def _parse_setting(definition: PropertyDef, setting: _Setting) -> ConfigValue:
    try:
        return definition.parse(setting.text)
    except InvalidValue as exc:
        raise setting.error(_invalid_message(exc, definition)) from None


def _invalid_message(exc: InvalidValue, definition: PropertyDef) -> str:
    expected = f"expected {definition.expectation()}"
    return f"{exc}; {expected}" if exc.specific else expected


def _check_consistency(values: Mapping[str, ConfigValue], settings: Mapping[str, _Setting]) -> None:
    """Rules that involve more than one property; errors point at the setting to fix."""

    def blame(*keys: str) -> _Setting:
        for key in keys:
            if key in settings:
                return settings[key]
        return _Setting(keys[0], render_value(values[keys[0]]) or "", origin="default")

    node_id, broker_id = values["node.id"], values["broker.id"]
    if "node.id" in settings and "broker.id" in settings and node_id != broker_id:
        raise blame("node.id").error(f"conflicts with broker.id={broker_id}; set one of them")

    if _resolve_retention_ms(values) == 0:
        raise blame("log.retention.ms", "log.retention.minutes", "log.retention.hours").error(
            "retention must be at least 1 ms, or -1 to keep data forever"
        )

    if values["log.dirs"] is None and not str(values["log.dir"]).strip():
        raise blame("log.dir").error("must name a directory")

    protocol_map = parse_protocol_map(values["listener.security.protocol.map"])
    listener_entries = values["listeners"]
    if not isinstance(listener_entries, tuple) or not listener_entries:
        raise blame("listeners").error("must name at least one listener")
    try:
        listeners = resolve_listeners(listener_entries, protocol_map)
    except InvalidValue as exc:
        raise blame("listeners", "listener.security.protocol.map").error(str(exc)) from None
    bound_ports = [listener.port for listener in listeners if listener.port != 0]
    for port in bound_ports:
        if bound_ports.count(port) > 1:
            raise blame("listeners").error(f"port {port} is used by more than one listener")
    names = {listener.name for listener in listeners}
    for key in settings:
        # Security settings for a listener not (yet) configured are kept, as Kafka keeps them; a connection
        # limit for an unknown listener is a typo that would silently leave that listener unlimited.
        split = split_listener_key(key)
        if split is not None and split[1] in LISTENER_PROPERTIES and split[0] not in names:
            raise blame(key).error(f"names no listener: {split[0]} is not one of {', '.join(sorted(names))}")

    advertised_entries = values["advertised.listeners"]
    if isinstance(advertised_entries, tuple) and advertised_entries:
        try:
            advertised = resolve_listeners(advertised_entries, protocol_map)
        except InvalidValue as exc:
            raise blame("advertised.listeners").error(str(exc)) from None
        for listener in advertised:
            if listener.binds_all_interfaces:
                raise blame("advertised.listeners").error(
                    f"listener {listener.name} advertises a wildcard host; clients need a reachable address"
                )
            if listener.name not in names:
                raise blame("advertised.listeners").error(
                    f"listener name {listener.name} is not one of the listeners ({', '.join(sorted(names))})"
                )

    inter_broker = values["inter.broker.listener.name"]
    if isinstance(inter_broker, str) and inter_broker and inter_broker.upper() not in names:
        raise blame("inter.broker.listener.name").error(
            f"is not one of the listeners ({', '.join(sorted(names))})"
        )
    if isinstance(advertised_entries, tuple) and advertised_entries:
        # Other brokers reach this one through its registration: the inter-broker listener must be in it.
        inter_broker_name = inter_broker.upper() if isinstance(inter_broker, str) and inter_broker else \
            listeners[0].name
        advertised_names = {listener.name for listener in advertised}
        if inter_broker_name not in advertised_names:
            raise blame("advertised.listeners", "inter.broker.listener.name").error(
                f"does not advertise the inter-broker listener {inter_broker_name}; other brokers could not reach "
                "this one"
            )

    min_session, max_session = values["group.min.session.timeout.ms"], values["group.max.session.timeout.ms"]
    if isinstance(min_session, int) and isinstance(max_session, int) and min_session > max_session:
        raise blame("group.min.session.timeout.ms", "group.max.session.timeout.ms").error(
            f"group.min.session.timeout.ms ({min_session}) exceeds group.max.session.timeout.ms ({max_session})"
        )


def _resolve_retention_ms(values: Mapping[str, ConfigValue]) -> int:
    millis = values["log.retention.ms"]
    if not isinstance(millis, int):
        minutes = values["log.retention.minutes"]
        if isinstance(minutes, int):
            millis = minutes * _MS_PER_MINUTE
        else:
            hours = values["log.retention.hours"]
            millis = int(hours) * _MS_PER_HOUR if isinstance(hours, int) else -1
    return -1 if millis < 0 else millis


def _suggestion(name: str, known: Iterable[str]) -> str:
    matches = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {matches[0]!r}?)" if matches else ""


def _expect(config: BrokerConfig, name: str, kinds: tuple[PropertyType, ...], python_type: type[_T]) -> _T:
    value = _expect_optional(config, name, kinds, python_type)
    if value is None:
        raise LookupError(f"broker property {name!r} is unset and has no default")
    return value


def _expect_optional(
    config: BrokerConfig, name: str, kinds: tuple[PropertyType, ...], python_type: type[_T]
) -> _T | None:
    value = config.get(name)
    definition = BROKER_PROPERTIES[name]
    if definition.type not in kinds:
        raise TypeError(f"broker property {name!r} is a {definition.type.value}, not a {python_type.__name__}")
    return cast(_T, value)
