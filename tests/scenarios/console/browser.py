"""A real headless Chromium (Debian's ``chromium`` and ``chromium-driver``) driven by Selenium, and a console process.

Chromium is started with the flags that keep it offline and quiet (no
sync, no component updates, no first-run page) and a fresh profile, and
Selenium is given the driver's path so it never tries to download one.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TypeVar

import pytest

from tests.support.ports import free_port

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1280,1000",
)
T = TypeVar("T")


def skip_unless_chromium() -> None:
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    if missing:
        pytest.skip(f"browser tests need Debian's chromium and chromium-driver; missing {', '.join(missing)}")


@contextmanager
def headless_chromium() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="spate-chromium-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        driver.set_page_load_timeout(60)
        # A page reached by a click may still be loading when the test looks for its elements.
        driver.implicitly_wait(10)
        try:
            yield driver
        finally:
            driver.quit()


@dataclass
class ConsoleProcess:
    """``spate console`` as a user starts it, on a free port."""

    process: subprocess.Popen
    port: int
    log_path: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextmanager
def running_console(bootstrap: str, log_dir: Path, *extra: str) -> Iterator[ConsoleProcess]:
    port = free_port()
    log_path = log_dir / f"console-{port}.log"
    command = [sys.executable, "-m", "spate.cli.main", "console", "--bootstrap-server", bootstrap,
               "--port", str(port), *extra]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    console = ConsoleProcess(process, port, log_path)
    try:
        wait_until(lambda: "Spate console for" in console.log() or process.poll() is not None, 30, "console start")
        assert process.poll() is None, f"spate console exited:\n{console.log()}"
        yield console
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_until(condition: Callable[[], T], timeout: float, what: str, interval: float = 0.2) -> T:
    """Poll ``condition`` until it returns something true; fail naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
