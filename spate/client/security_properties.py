"""Kafka's client security properties (``security.protocol``, ``sasl.*``, ``ssl.*``) as client settings.

Tools take security the way Kafka's do: a properties file
(``--command-config``) or ``kafka.``-prefixed options (Spark). This module
turns those property names into the client's keywords
(:mod:`spate.client.net.security`), parsing the username and password out of
a ``sasl.jaas.config`` entry of ``PlainLoginModule`` or ``ScramLoginModule``.
What the client cannot do (JKS or PKCS12 stores, other login modules) is a
:class:`SecurityPropertyError` naming the property.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from spate.client.net.security import SECURITY_PROTOCOLS
from spate.protocol.sasl import MECHANISMS

PLAIN_MODULE = "org.apache.kafka.common.security.plain.PlainLoginModule"
SCRAM_MODULE = "org.apache.kafka.common.security.scram.ScramLoginModule"

# Property -> client keyword, for those taken as they are.
_DIRECT = {
    "security.protocol": "security_protocol",
    "sasl.mechanism": "sasl_mechanism",
    "sasl.username": "sasl_username",
    "sasl.password": "sasl_password",
    "ssl.truststore.location": "ssl_truststore_location",
    "ssl.ca.location": "ssl_truststore_location",  # librdkafka's name
    "ssl.keystore.location": "ssl_keystore_location",
    "ssl.key.password": "ssl_key_password",
    "ssl.endpoint.identification.algorithm": "ssl_endpoint_identification_algorithm",
}
# Accepted and not needed: a PEM store has no password, and these are the defaults.
_IGNORED = {"ssl.truststore.password", "ssl.keystore.password", "ssl.protocol", "ssl.enabled.protocols"}
SECURITY_PROPERTIES = frozenset(_DIRECT) | {"sasl.jaas.config", "ssl.truststore.type", "ssl.keystore.type"} | _IGNORED

_JAAS = re.compile(r"^\s*(?P<module>[\w.$]+)\s+(?P<flag>required|requisite|sufficient|optional)(?P<options>.*?);?\s*$",
                   re.DOTALL)
_JAAS_OPTION = re.compile(r'\s*([\w.-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))')


class SecurityPropertyError(ValueError):
    def __init__(self, name: str, problem: str) -> None:
        self.property = name
        super().__init__(f"{name}: {problem}")


def is_security_property(name: str) -> bool:
    return name in SECURITY_PROPERTIES or name.startswith(("ssl.", "sasl."))


def parse_jaas_config(text: str) -> tuple[str, dict[str, str]]:
    """``Module required key="value" ...;`` as ``(module, options)``."""
    match = _JAAS.match(text)
    if match is None:
        raise SecurityPropertyError("sasl.jaas.config", "expected '<LoginModule> required username=\"...\" "
                                                        "password=\"...\";'")
    options, rest = {}, match["options"]
    position = 0
    while rest[position:].strip():
        option = _JAAS_OPTION.match(rest, position)
        if option is None:
            raise SecurityPropertyError("sasl.jaas.config", f"cannot read the options at {rest[position:].strip()!r}")
        value = option[2] if option[2] is not None else option[3]
        options[option[1]] = re.sub(r"\\(.)", r"\1", value)
        position = option.end()
    return match["module"], options


def security_settings(properties: Mapping[str, str]) -> dict[str, Any]:
    """The client keywords for the security properties among ``properties`` (others are left alone)."""
    settings: dict[str, Any] = {}
    for name, value in properties.items():
        if not is_security_property(name) or name in _IGNORED:
            continue
        value = value.strip()
        if name in _DIRECT:
            settings[_DIRECT[name]] = value
        elif name in ("ssl.truststore.type", "ssl.keystore.type"):
            if value.upper() != "PEM":
                raise SecurityPropertyError(name, f"only PEM is supported, not {value!r} (convert the store with "
                                                  "openssl or keytool)")
        elif name != "sasl.jaas.config":
            raise SecurityPropertyError(name, "is not a security setting Spate's client supports")
    mechanism = settings.get("sasl_mechanism")
    if mechanism is not None and mechanism.upper() not in MECHANISMS:
        raise SecurityPropertyError("sasl.mechanism", f"must be one of {', '.join(MECHANISMS)}, not {mechanism!r}")
    if "sasl.jaas.config" in properties:
        settings.update(_jaas_settings(properties["sasl.jaas.config"], settings.get("sasl_mechanism", "PLAIN")))
    _check_values(settings)
    return settings


def _jaas_settings(text: str, mechanism: str) -> dict[str, str]:
    module, options = parse_jaas_config(text)
    if module not in (PLAIN_MODULE, SCRAM_MODULE):
        raise SecurityPropertyError("sasl.jaas.config", f"login module {module} is not supported (use "
                                                        "PlainLoginModule or ScramLoginModule)")
    wants_scram = mechanism.upper().startswith("SCRAM-")
    if (module == SCRAM_MODULE) != wants_scram:
        raise SecurityPropertyError("sasl.jaas.config", f"{module.rsplit('.', 1)[1]} does not go with "
                                                        f"sasl.mechanism={mechanism}")
    missing = [key for key in ("username", "password") if key not in options]
    if missing:
        raise SecurityPropertyError("sasl.jaas.config", f"has no {' or '.join(missing)}")
    return {"sasl_username": options["username"], "sasl_password": options["password"]}


def _check_values(settings: dict[str, Any]) -> None:
    protocol = settings.get("security_protocol")
    if protocol is not None:
        if protocol.upper() not in SECURITY_PROTOCOLS:
            raise SecurityPropertyError("security.protocol", f"must be one of {', '.join(SECURITY_PROTOCOLS)}, "
                                                             f"not {protocol!r}")
        settings["security_protocol"] = protocol = protocol.upper()
        if protocol.startswith("SASL_") and ("sasl_username" not in settings or "sasl_password" not in settings):
            raise SecurityPropertyError("sasl.jaas.config", f"is needed with security.protocol={protocol} (or "
                                                            "sasl.username and sasl.password)")
    algorithm = settings.get("ssl_endpoint_identification_algorithm")
    if algorithm is not None:
        if algorithm.lower() not in ("https", "", "none"):
            raise SecurityPropertyError("ssl.endpoint.identification.algorithm",
                                        f"must be https or empty, not {algorithm!r}")
        settings["ssl_endpoint_identification_algorithm"] = "https" if algorithm.lower() == "https" else ""
    for key in ("ssl_truststore_location", "ssl_keystore_location"):
        path = settings.get(key)
        if path is not None and not Path(path).is_file():
            name = {"ssl_truststore_location": "ssl.truststore.location",
                    "ssl_keystore_location": "ssl.keystore.location"}[key]
            raise SecurityPropertyError(name, f"no such file: {path}")


def read_properties(text: str) -> dict[str, str]:
    """A Java properties file: ``key=value`` or ``key: value``, ``#``/``!`` comments, ``\\`` continuations."""
    properties: dict[str, str] = {}
    logical: list[str] = []
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical.append(line[:-1])
            continue
        logical.append(line)
        entry, logical = "".join(logical), []
        parts = re.split(r"\s*[=:]\s*|\s+", entry, maxsplit=1)
        if parts[0]:
            properties[parts[0]] = parts[1] if len(parts) > 1 else ""
    return properties
