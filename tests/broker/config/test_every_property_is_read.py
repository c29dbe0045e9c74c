"""No broker property is accepted and then ignored: every declared name is read somewhere in the broker."""

from __future__ import annotations

from pathlib import Path

from broker_core.config.broker_properties import BROKER_PROPERTIES

ROOT = Path(__file__).resolve().parents[3]


def test_every_declared_broker_property_is_named_by_the_code_that_reads_it() -> None:
    sources = "\n".join(
        path.read_text(encoding="utf-8")
        for package in ("broker_core", "spate")
        for path in (ROOT / package).rglob("*.py")
        if path.name != "broker_properties.py"
    )
    unread = sorted(name for name in BROKER_PROPERTIES if f'"{name}"' not in sources and f"'{name}'" not in sources)
    assert unread == [], f"declared but never read: {unread}"
