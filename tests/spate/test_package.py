"""The package users import: `from spate import Producer, Consumer, Admin`, and the README's example runs."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import spate
from broker_core.server.embedded import EmbeddedBroker

REPO = Path(__file__).resolve().parents[2]


def test_the_client_is_importable_from_the_top_package_in_a_fresh_interpreter() -> None:
    probe = "import spate; print(spate.Producer.__name__, spate.Consumer.__name__, spate.Admin.__name__)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Producer", "Consumer", "Admin"]


def test_the_top_package_lists_the_client_api_and_refuses_unknown_names() -> None:
    from spate import client

    assert set(client.__all__) <= set(dir(spate))
    assert spate.TopicPartition is client.TopicPartition
    with pytest.raises(AttributeError, match="no attribute 'Nonexistent'"):
        spate.Nonexistent  # noqa: B018


def test_the_readme_client_example_produces_and_consumes(tmp_path: Path) -> None:
    from spate import Admin, Consumer, NewTopic, Producer

    topic, group = f"orders-{uuid.uuid4().hex[:8]}", f"billing-{uuid.uuid4().hex[:8]}"
    with EmbeddedBroker(tmp_path, {"group.initial.rebalance.delay.ms": "0"}) as broker:
        bootstrap = broker.bootstrap_servers
        with Admin(bootstrap) as admin:
            admin.create_topics([NewTopic(topic, num_partitions=3)])
        with Producer(bootstrap, linger_ms=5) as producer:
            producer.send(topic, b"hello", key=b"k").result()
        with Consumer(bootstrap, group_id=group, auto_offset_reset="earliest") as consumer:
            consumer.subscribe([topic])
            records = []
            for _ in range(100):
                records.extend(consumer.poll(timeout_ms=200))
                if records:
                    break
            consumer.commit()
            assert [(r.key, r.value) for r in records] == [(b"k", b"hello")]
            committed = consumer.committed([records[0].topic_partition])
        assert committed[records[0].topic_partition].offset == records[0].offset + 1
