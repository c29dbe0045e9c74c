"""How a property is declared, parsed from text, validated and rendered back.

Types follow Kafka's ``ConfigDef``: a value is trimmed, then parsed as its
declared type; a validator then checks range or allowed values. Lists are
comma-separated and parsed to tuples so a loaded config stays immutable.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Callable, Union

ConfigValue = Union[bool, int, float, str, tuple[str, ...], None]

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

_INTEGER = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class PropertyType(enum.Enum):
    """Kafka's config types; the bit widths bound the accepted integers."""

    BOOLEAN = "boolean"
    SHORT = "short"
    INT = "int"
    LONG = "long"
    DOUBLE = "double"
    STRING = "string"
    LIST = "list"

    @property
    def bounds(self) -> tuple[int, int] | None:
        bits = {PropertyType.SHORT: 16, PropertyType.INT: 32, PropertyType.LONG: 64}.get(self)
        if bits is None:
            return None
        return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1

    @property
    def description(self) -> str:
        return {
            PropertyType.BOOLEAN: "a boolean (true or false)",
            PropertyType.SHORT: "a 16-bit integer",
            PropertyType.INT: "a 32-bit integer",
            PropertyType.LONG: "a 64-bit integer",
            PropertyType.DOUBLE: "a decimal number",
            PropertyType.STRING: "a string",
            PropertyType.LIST: "a comma-separated list",
        }[self]


class InvalidValue(ValueError):
    """A value failed parsing or validation.

    ``specific`` is False when the property's expectation (type and validator)
    already says everything, so callers need not repeat the message.
    """

    def __init__(self, message: str, *, specific: bool = True) -> None:
        super().__init__(message)
        self.specific = specific


@dataclass(frozen=True)
class Range:
    """Inclusive numeric bounds; ``None`` leaves a side open."""

    minimum: int | float | None = None
    maximum: int | float | None = None

    def check(self, value: ConfigValue) -> None:
        if value is None or isinstance(value, (bool, str, tuple)):
            return
        if self.minimum is not None and value < self.minimum:
            raise InvalidValue(f"must be {self.describe()}", specific=False)
        if self.maximum is not None and value > self.maximum:
            raise InvalidValue(f"must be {self.describe()}", specific=False)

    def describe(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"between {self.minimum} and {self.maximum}"
        if self.minimum is not None:
            return f"at least {self.minimum}"
        return f"at most {self.maximum}"


def at_least(minimum: int | float) -> Range:
    return Range(minimum=minimum)


@dataclass(frozen=True)
class ValidString:
    """One of a fixed set of strings (case-sensitive, as Kafka's enums are)."""

    allowed: tuple[str, ...]

    def check(self, value: ConfigValue) -> None:
        if value is None:
            return
        if value not in self.allowed:
            raise InvalidValue(f"must be {self.describe()}", specific=False)

    def describe(self) -> str:
        return "one of " + ", ".join(self.allowed)


@dataclass(frozen=True)
class ValidList:
    """Every element is one of ``allowed``; no element repeats."""

    allowed: tuple[str, ...]
    allow_empty: bool = False

    def check(self, value: ConfigValue) -> None:
        if value is None or not isinstance(value, tuple):
            return
        if not value and not self.allow_empty:
            raise InvalidValue(f"must not be empty; elements are {self.describe()}")
        for element in value:
            if element not in self.allowed:
                raise InvalidValue(f"element {element!r} is not allowed")
        _check_no_duplicates(value)

    def describe(self) -> str:
        return "one of " + ", ".join(self.allowed)


@dataclass(frozen=True)
class NonEmptyDistinctList:
    """At least one element, none repeated (``log.dirs``)."""

    def check(self, value: ConfigValue) -> None:
        if value is None or not isinstance(value, tuple):
            return
        if not value:
            raise InvalidValue("must name at least one entry")
        _check_no_duplicates(value)

    def describe(self) -> str:
        return "a non-empty list without duplicates"


@dataclass(frozen=True)
class CustomCheck:
    """A validator written as a function that raises :class:`InvalidValue`."""

    check_fn: Callable[[ConfigValue], None]
    description: str

    def check(self, value: ConfigValue) -> None:
        if value is not None:
            self.check_fn(value)

    def describe(self) -> str:
        return self.description


Validator = Union[Range, ValidString, ValidList, NonEmptyDistinctList, CustomCheck]


@dataclass(frozen=True)
class PropertyDef:
    """One known property: name, type, default, validator, one-line doc.

    ``synonyms`` lists other property names that set the same thing, in the
    order Kafka consults them after this one (``log.retention.ms`` before
    ``log.retention.minutes`` before ``log.retention.hours``). A default of
    ``None`` means "unset": the value comes from a synonym.
    """

    name: str
    type: PropertyType
    default: ConfigValue
    doc: str
    validator: Validator | None = None
    synonyms: tuple[str, ...] = ()

    def parse(self, text: str) -> ConfigValue:
        """Parse and validate ``text``; :class:`InvalidValue` says what was expected."""
        value = parse_typed(self.type, text)
        if self.validator is not None:
            self.validator.check(value)
        return value

    def render(self, value: ConfigValue) -> str | None:
        return render_value(value)

    def expectation(self) -> str:
        text = self.type.description
        if self.validator is not None:
            text += f", {self.validator.describe()}"
        return text


def parse_typed(kind: PropertyType, text: str) -> ConfigValue:
    trimmed = text.strip()
    if kind is PropertyType.BOOLEAN:
        lowered = trimmed.lower()
        if lowered == "true":
            return True
        if lowered == "false":
            return False
        raise InvalidValue(f"expected {kind.description}", specific=False)
    bounds = kind.bounds
    if bounds is not None:
        if not _INTEGER.fullmatch(trimmed):
            raise InvalidValue(f"expected {kind.description}", specific=False)
        number = int(trimmed)
        if not bounds[0] <= number <= bounds[1]:
            raise InvalidValue(f"expected {kind.description}", specific=False)
        return number
    if kind is PropertyType.DOUBLE:
        if not _DECIMAL.fullmatch(trimmed):
            raise InvalidValue(f"expected {kind.description}", specific=False)
        number_f = float(trimmed)
        if not math.isfinite(number_f):
            raise InvalidValue(f"expected {kind.description}", specific=False)
        return number_f
    if kind is PropertyType.LIST:
        if not trimmed:
            return ()
        elements = tuple(part.strip() for part in trimmed.split(","))
        if any(not element for element in elements):
            raise InvalidValue("empty list element")
        return elements
    return trimmed


def render_value(value: ConfigValue) -> str | None:
    """The canonical text of a value, as DescribeConfigs reports it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(value)
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _check_no_duplicates(value: tuple[str, ...]) -> None:
    seen: set[str] = set()
    for element in value:
        if element in seen:
            raise InvalidValue(f"element {element!r} appears twice")
        seen.add(element)
