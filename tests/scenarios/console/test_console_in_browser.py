"""The web console in a real headless Chromium against a real broker: what a user sees and does."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from spate.client import Admin, Consumer, NewTopic, Producer, TopicPartition
from tests.scenarios.console.browser import (
    ConsoleProcess,
    headless_chromium,
    running_console,
    skip_unless_chromium,
    wait_until,
)
from tests.support.broker_process import BrokerProcess

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def console(broker: BrokerProcess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConsoleProcess]:
    skip_unless_chromium()
    with running_console(broker.bootstrap, tmp_path_factory.mktemp("console")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(console: ConsoleProcess) -> Iterator[object]:
    with headless_chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def admin(broker: BrokerProcess) -> Iterator[Admin]:
    with Admin(broker.bootstrap) as client:
        yield client


def by_id(driver, element_id: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def text_of(driver, element_id: str) -> str:
    """The element's text, or "" while the page that holds it is still loading (or was just replaced)."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException

    try:
        return by_id(driver, element_id).text
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def heading(driver) -> str:
    """The page's title, or "" while a new page is still loading."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.TAG_NAME, "h1").text
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def create_topic(admin: Admin, name: str, partitions: int = 1) -> None:
    admin.create_topics([NewTopic(name, partitions, 1)])
    wait_until(lambda: name in admin.list_topics(), 20, f"topic {name} to appear")


@pytest.mark.parametrize("path, title", [("/", "Overview"), ("/topics", "Topics"), ("/groups", "Consumer groups"),
                                         ("/replication", "Replication")])
def test_pages_render(browser, console: ConsoleProcess, path: str, title: str) -> None:
    browser.get(console.url + path)
    assert heading(browser) == title
    assert "Console error" not in browser.page_source


def test_overview_shows_the_broker_and_the_controller(browser, console: ConsoleProcess, broker: BrokerProcess) -> None:
    browser.get(console.url + "/")
    assert broker.bootstrap in by_id(browser, "brokers").text
    assert broker.bootstrap in by_id(browser, "controller").text


def test_a_topic_is_created_and_deleted_through_the_ui(browser, console: ConsoleProcess, admin: Admin) -> None:
    browser.get(console.url + "/topics")
    by_id(browser, "new-topic-name").send_keys("made-in-browser")
    browser.find_element("name", "partitions").clear()
    browser.find_element("name", "partitions").send_keys("3")
    by_id(browser, "create-topic-submit").click()
    wait_until(lambda: heading(browser) == "Topic made-in-browser", 30, "the new topic's page")
    assert len(admin.describe_topics(["made-in-browser"])["made-in-browser"].partitions) == 3
    assert by_id(browser, "partitions").text.count("\n") >= 3  # a header row and three partitions

    by_id(browser, "delete-topic").click()
    by_id(browser, "confirm-name").send_keys("made-in-browser")
    by_id(browser, "confirm-delete").click()
    wait_until(lambda: heading(browser) == "Topics", 30, "the topic list after deleting")
    assert "deleted topic made-in-browser" in by_id(browser, "flash").text
    wait_until(lambda: "made-in-browser" not in admin.list_topics(), 30, "the topic to be gone")


def test_the_message_browser_shows_a_record_as_json_text_and_hex(browser, console: ConsoleProcess,
                                                                 admin: Admin, broker: BrokerProcess) -> None:
    create_topic(admin, "browsed")
    value = json.dumps({"order": 7, "note": "<script>window.hacked=1</script>"}).encode()
    with Producer(broker.bootstrap) as producer:
        producer.send("browsed", value, key=b"order-7", headers=[("trace", b"\x00\x01")]).result(timeout=30)

    browser.get(console.url + "/topics/browsed/messages?partition=0&offset=0")
    records = by_id(browser, "records").text
    assert "order-7" in records and '"order": 7' in records  # JSON, pretty-printed
    assert "<script>window.hacked=1</script>" in records  # shown as text, not run
    assert browser.execute_script("return window.hacked === undefined")
    assert "00 01" in records  # a binary header as hex

    browser.get(console.url + "/topics/browsed/messages?partition=0&offset=0&format=text")
    assert json.dumps({"order": 7, "note": "<script>window.hacked=1</script>"}) in by_id(browser, "records").text

    browser.get(console.url + "/topics/browsed/messages?partition=0&offset=0&format=hex")
    assert value.hex(" ") in by_id(browser, "records").text
    assert b"order-7".hex(" ") in by_id(browser, "records").text


def test_the_message_browser_starts_at_a_time(browser, console: ConsoleProcess, admin: Admin,
                                             broker: BrokerProcess) -> None:
    create_topic(admin, "timed")
    with Producer(broker.bootstrap) as producer:
        producer.send("timed", b"early", timestamp=1_700_000_000_000).result(timeout=30)
        producer.send("timed", b"late", timestamp=1_800_000_000_000).result(timeout=30)
    browser.get(console.url + "/topics/timed/messages?partition=0")
    by_id(browser, "timestamp").send_keys("2025-01-01T00:00:00Z")
    by_id(browser, "browse-submit").click()
    wait_until(lambda: "late" in text_of(browser, "records"), 30, "the records after the time")
    assert "early" not in by_id(browser, "records").text
    assert "2027-01-15T08:00:00.000+00:00" in by_id(browser, "records").text


def test_the_replication_page_lists_every_partition_with_its_isr(browser, console: ConsoleProcess,
                                                                 admin: Admin, broker: BrokerProcess) -> None:
    create_topic(admin, "replicated", partitions=2)
    browser.get(console.url + "/replication")
    rows = [row for row in by_id(browser, "replication").text.splitlines() if row.startswith("replicated ")]
    assert rows == ["replicated 0 0 0 0 in sync", "replicated 1 0 0 0 in sync"]


def test_follow_mode_shows_new_records(browser, console: ConsoleProcess, admin: Admin,
                                       broker: BrokerProcess) -> None:
    create_topic(admin, "followed")
    browser.get(console.url + "/topics/followed/messages?partition=0")
    by_id(browser, "follow").click()
    with Producer(broker.bootstrap) as producer:
        producer.send("followed", b"arrived later", key=b"late").result(timeout=30)
    wait_until(lambda: "arrived later" in text_of(browser, "records"), 30, "the followed record")


def test_the_lag_chart_updates_as_records_arrive(browser, console: ConsoleProcess, admin: Admin,
                                                 broker: BrokerProcess) -> None:
    create_topic(admin, "lagging")
    with Producer(broker.bootstrap) as producer:
        for n in range(5):
            producer.send("lagging", b"x%d" % n).result(timeout=30)
    tp = TopicPartition("lagging", 0)
    with Consumer(broker.bootstrap, group_id="chart-readers", enable_auto_commit=False) as consumer:
        consumer.assign([tp])
        consumer.commit({tp: 5})

    browser.get(console.url + "/groups/chart-readers")
    assert by_id(browser, "lag-total").get_attribute("data-lag") == "0"
    with Producer(broker.bootstrap) as producer:
        for n in range(7):
            producer.send("lagging", b"y%d" % n).result(timeout=30)
    wait_until(lambda: by_id(browser, "lag-total").get_attribute("data-lag") == "7", 30, "the lag to reach 7")
    points = by_id(browser, "lag-line").get_attribute("points").split()
    assert len(points) >= 2
    assert points[0] != points[-1]  # the line climbed from 0 to 7
    assert "7" in by_id(browser, "lag").text
    partition_line = browser.find_element("css selector", 'polyline.partition-line[data-partition="lagging-0"]')
    assert partition_line.get_attribute("points")
    assert "lagging-0" in by_id(browser, "lag-legend").text


def test_offsets_are_reset_after_confirmation(browser, console: ConsoleProcess, admin: Admin) -> None:
    browser.get(console.url + "/groups/chart-readers")
    from selenium.webdriver.support.ui import Select

    Select(by_id(browser, "reset-mode")).select_by_value("latest")
    by_id(browser, "reset-preview").click()
    wait_until(lambda: heading(browser) == "Reset offsets of chart-readers?", 30, "Reset offsets of chart-readers?")
    by_id(browser, "confirm-reset").click()
    wait_until(lambda: heading(browser) == "Group chart-readers", 30, "the group page after the reset")
    committed = admin.list_group_offsets("chart-readers")
    assert committed[TopicPartition("lagging", 0)].offset == 12


def test_read_only_mode_hides_and_refuses_a_delete(broker: BrokerProcess, admin: Admin, tmp_path: Path) -> None:
    skip_unless_chromium()
    create_topic(admin, "kept")
    with running_console(broker.bootstrap, tmp_path, "--read-only") as read_only, headless_chromium() as driver:
        driver.get(read_only.url + "/topics/kept")
        assert by_id(driver, "read-only-badge").text == "read-only"
        assert "delete-topic" not in driver.page_source
        driver.get(read_only.url + "/topics/kept/delete")
        assert heading(driver) == "Refused"
        # A hand-made POST is refused by the server too, not only hidden by the page.
        status = driver.execute_async_script(
            "var done = arguments[0];"
            "fetch('/topics/kept/delete', {method: 'POST', body: new URLSearchParams({confirm: 'kept'})})"
            ".then(function(r){ done(r.status); });"
        )
        assert status == 403
    assert "kept" in admin.list_topics()
