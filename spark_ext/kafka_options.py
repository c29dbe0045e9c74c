"""What the spate source and sink share in checking Spark's Kafka options.

Both sides take the same shapes of option: ``bootstrap.servers`` with its
``kafka.`` alias, ``kafka.``-prefixed client settings mapped onto Spate's
client keywords, settings refused with a reason, and whole numbers and
booleans. :class:`OptionRules` holds one side's tables and raises that side's
error type, so messages name the side and the option exactly as users spell it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from spate.client import SecurityPropertyError, is_security_property, security_settings

# Client keywords of the security settings: every client of a read or write (admin too) takes them.
SECURITY_KEYWORDS = frozenset({
    "security_protocol", "sasl_mechanism", "sasl_username", "sasl_password", "ssl_truststore_location",
    "ssl_keystore_location", "ssl_key_password", "ssl_endpoint_identification_algorithm",
})


class OptionError(ValueError):
    """An option a spate source or sink cannot accept; ``option`` is its name as users spell it."""

    side = "spate"

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        super().__init__(f"{self.side} option '{option}': {problem}")


@dataclass(frozen=True)
class OptionRules:
    """One side's option tables.

    ``display`` maps lower-cased names to their usual spelling; ``client_settings``
    maps ``kafka.<name>`` to ``(client keyword, kind)`` with kind one of
    ``text``, ``bool``, ``positive`` or ``non_negative``; ``forbidden`` maps
    ``kafka.<name>`` to the reason it is refused.
    """

    error: type[OptionError]
    client: str
    display: Mapping[str, str]
    client_settings: Mapping[str, tuple[str, str]]
    forbidden: Mapping[str, str]

    def name(self, lowered: str) -> str:
        return self.display.get(lowered, lowered)

    def reject_unknown(self, opts: Mapping[str, str], accepted: set[str]) -> None:
        for name in sorted(opts):
            if name in accepted:
                continue
            if name in self.forbidden:
                raise self.error(name, f"is not allowed: {self.forbidden[name]}")
            if name.startswith("kafka."):
                raise self.error(name, f"is not a {self.client} setting the {self.error.side} supports")
            raise self.error(name, f"is not an option of the {self.error.side}")

    def settings(self, opts: Mapping[str, str]) -> tuple[dict[str, Any], list[str]]:
        """The client keywords given through ``kafka.`` options, and those options' names."""
        settings: dict[str, Any] = {}
        used: list[str] = []
        for name, (keyword, kind) in self.client_settings.items():
            if name not in opts:
                continue
            used.append(name)
            text = opts[name].strip()
            if kind == "bool":
                settings[keyword] = self.parse_bool(name, text)
            elif kind == "text":
                if not text:
                    raise self.error(name, "must not be empty")
                settings[keyword] = text
            else:
                settings[keyword] = self.parse_int(name, text, minimum=1 if kind == "positive" else 0)
        settings.update(self.security(opts, used))
        return settings, used

    def security(self, opts: Mapping[str, str], used: list[str]) -> dict[str, Any]:
        """``kafka.security.protocol``, ``kafka.sasl.*`` and ``kafka.ssl.*`` as client keywords (Kafka's
        client properties, ``sasl.jaas.config`` included); appends the options' names to ``used``."""
        properties = {name[len("kafka."):]: value for name, value in opts.items()
                      if name.startswith("kafka.") and (name == "kafka.security.protocol"
                                                        or is_security_property(name[len("kafka."):]))}
        used.extend(f"kafka.{name}" for name in properties)
        try:
            return security_settings(properties)
        except SecurityPropertyError as exc:
            raise self.error(f"kafka.{exc.property}", str(exc).split(": ", 1)[1]) from None

    def aliased(
        self, opts: Mapping[str, str], plain: str, prefixed: str, *, same: Callable[[str], str] = str.strip
    ) -> tuple[str, str | None]:
        """``(name given, value)`` of an option that ``prefixed`` also names; both given must agree."""
        first, second = opts.get(plain), opts.get(prefixed)
        if first is not None and second is not None and same(first) != same(second):
            raise self.error(
                self.name(plain), f"differs from {self.name(prefixed)} ({first!r} vs {second!r}); set only one"
            )
        if first is not None:
            return self.name(plain), first
        return self.name(prefixed), second

    def bootstrap_servers(self, opts: Mapping[str, str]) -> str:
        name, value = self.aliased(opts, "bootstrap.servers", "kafka.bootstrap.servers")
        if value is None or not value.strip():
            raise self.error("kafka.bootstrap.servers", "is required (host:port of one or more brokers)")
        for item in value.split(","):
            host, sep, port = item.strip().rpartition(":")
            if not sep or not host or not port.isdigit():
                raise self.error(name, f"{item!r} is not host:port")
        return value.strip()

    def parse_int(self, name: str, text: str, *, minimum: int) -> int:
        try:
            value = int(text)
        except ValueError:
            raise self.error(self.name(name), f"must be a whole number, not {text!r}") from None
        if value < minimum:
            raise self.error(self.name(name), f"must be at least {minimum}, not {value}")
        return value

    def parse_bool(self, name: str, text: str) -> bool:
        lowered = text.lower()
        if lowered in ("true", "false"):
            return lowered == "true"
        raise self.error(self.name(name), f"must be true or false, not {text!r}")
