"""The web console against a real three-broker cluster: brokers, controller and replication state as they change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from spate.client import Admin, NewTopic
from tests.scenarios.console.browser import (
    ConsoleProcess,
    headless_chromium,
    running_console,
    skip_unless_chromium,
    wait_until,
)
from tests.support.cluster import ClusterForTests, restart_stopped_brokers, settled_cluster
from tests.support.zookeeper import ZooKeeperForTests

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

TOPIC = "replicated-orders"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, zookeeper: ZooKeeperForTests) -> Iterator[ClusterForTests]:
    skip_unless_chromium()
    with settled_cluster(tmp_path_factory.mktemp("console-cluster"), zookeeper, brokers=3,
                         overrides={"replica.lag.time.max.ms": "2000", "offsets.topic.num.partitions": "1"}) as running:
        with Admin(running.bootstrap) as admin:
            admin.create_topics([NewTopic(TOPIC, 2, 3)])
        running.wait_for_metadata([TOPIC])
        yield running


@pytest.fixture(scope="module")
def console(cluster: ClusterForTests, tmp_path_factory) -> Iterator[ConsoleProcess]:
    with running_console(cluster.bootstrap, tmp_path_factory.mktemp("console")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(console: ConsoleProcess) -> Iterator[object]:
    with headless_chromium() as driver:
        yield driver


def page_text(browser, url: str, element_id: str) -> str:
    from selenium.common.exceptions import NoSuchElementException
    from selenium.webdriver.common.by import By

    browser.get(url)
    try:
        return browser.find_element(By.ID, element_id).text
    except NoSuchElementException:
        return ""


def topic_rows(browser, console: ConsoleProcess) -> list[list[str]]:
    """The replication table's cells for the topic: partition, leader, replicas, ISR, state."""
    from selenium.webdriver.common.by import By

    browser.get(console.url + "/replication")
    rows = []
    for row in browser.find_elements(By.CSS_SELECTOR, "#replication tr"):
        cells = [cell.text for cell in row.find_elements(By.TAG_NAME, "td")]
        if cells and cells[0] == TOPIC:
            rows.append(cells[1:])
    return rows


def id_set(cell: str) -> set[int]:
    return {int(value) for value in cell.split(", ")}


def test_the_overview_lists_every_broker_and_names_the_controller(browser, console, cluster) -> None:
    brokers = page_text(browser, console.url + "/", "brokers")
    for broker_id in (1, 2, 3):
        assert cluster.address(broker_id) in brokers
    controller = cluster.controller_id()
    assert page_text(browser, console.url + "/", "controller").startswith(f"{controller} (")


def test_replication_shows_each_partition_in_sync_on_three_replicas(browser, console) -> None:
    rows = wait_until(lambda: topic_rows(browser, console), 30, "the topic's partitions")
    assert [partition for partition, *_ in rows] == ["0", "1"]
    for _, leader, replicas, isr, state in rows:
        assert id_set(replicas) == id_set(isr) == {1, 2, 3}
        assert int(leader) in id_set(replicas) and state == "in sync"


def test_a_stopped_broker_shows_as_under_replicated_and_recovers(browser, console, cluster) -> None:
    try:
        victim = next(b for b in (3, 2, 1) if b != cluster.controller_id())
        assert cluster.stop(victim) == 0
        rows = wait_until(lambda: [r for r in topic_rows(browser, console) if r[4] == "under-replicated"] or None,
                          60, f"the partitions to show broker {victim} out of their ISR")
        assert len(rows) == 2
        for _, leader, replicas, isr, _ in rows:
            assert id_set(replicas) == {1, 2, 3} and id_set(isr) == {1, 2, 3} - {victim}
            assert int(leader) != victim
        under = page_text(browser, console.url + "/", "under-replicated")
        assert f"{TOPIC} 0" in under and f"{TOPIC} 1" in under
    finally:
        restart_stopped_brokers(cluster)
    wait_until(lambda: all(r[4] == "in sync" and id_set(r[3]) == {1, 2, 3} for r in topic_rows(browser, console))
               or None, 60, "every partition back in sync")
