"""No setting is accepted and then ignored: every declared broker property and topic config is read somewhere."""

from __future__ import annotations

from pathlib import Path

from broker_core.config.broker_properties import BROKER_PROPERTIES
from broker_core.config.topic_config import TOPIC_CONFIGS

ROOT = Path(__file__).resolve().parents[3]
DECLARATIONS = {"broker_properties.py", "topic_config.py"}


def sources() -> str:
    return "\n".join(
        path.read_text(encoding="utf-8")
        for package in ("broker_core", "spate")
        for path in (ROOT / package).rglob("*.py")
        if path.name not in DECLARATIONS
    )


def named(name: str, text: str) -> bool:
    return f'"{name}"' in text or f"'{name}'" in text


def test_every_declared_broker_property_is_named_by_the_code_that_reads_it() -> None:
    text = sources()
    assert sorted(name for name in BROKER_PROPERTIES if not named(name, text)) == []


def test_every_topic_config_is_read_by_name_or_as_a_log_config_field() -> None:
    text = sources()
    unread = sorted(name for name, definition in TOPIC_CONFIGS.items()
                    if not named(name, text) and definition.log_config_field is None)
    assert unread == []
