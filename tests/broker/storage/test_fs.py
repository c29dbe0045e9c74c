"""Durable writes (fs.py): a replaced file holds the old or the new content, and its directory is fsynced."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from broker_core.storage import fs
from broker_core.storage.files import temp_path


class Recorder:
    """Wraps ``os.open``, ``os.fsync`` and ``os.replace`` as fs.py sees them, logging each call."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, fail_at: str | None = None) -> None:
        self.calls: list[tuple[str, object]] = []
        self.directory_fds: dict[int, str] = {}
        self._fail_at = fail_at
        real_open, real_fsync, real_replace = os.open, os.fsync, os.replace

        def open_(path, flags, *args):
            fd = real_open(path, flags, *args)
            if os.path.isdir(path):
                self.directory_fds[fd] = str(path)
            return fd

        def fsync(fd):
            self._step("fsync", self.directory_fds.get(fd, "file"))
            real_fsync(fd)

        def replace(src, dst):
            self._step("replace", Path(dst).name)
            real_replace(src, dst)

        monkeypatch.setattr(fs.os, "open", open_)
        monkeypatch.setattr(fs.os, "fsync", fsync)
        monkeypatch.setattr(fs.os, "replace", replace)

    def _step(self, name: str, detail: object) -> None:
        self.calls.append((name, detail))
        if name == self._fail_at:
            raise OSError(5, f"injected failure at {name}")


def test_write_atomically_replaces_the_content_and_leaves_no_temp_file(tmp_path: Path):
    path = tmp_path / "checkpoint"
    path.write_bytes(b"old")
    fs.write_atomically(path, b"new content")
    assert path.read_bytes() == b"new content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint"]


def test_write_atomically_creates_a_missing_file(tmp_path: Path):
    path = tmp_path / "fresh"
    fs.write_atomically(path, b"")
    assert path.read_bytes() == b""


def test_the_file_is_fsynced_before_the_rename_and_the_directory_after(tmp_path: Path, monkeypatch):
    recorder = Recorder(monkeypatch)
    fs.write_atomically(tmp_path / "state", b"data")
    assert recorder.calls == [("fsync", "file"), ("replace", "state"), ("fsync", str(tmp_path))]


@pytest.mark.parametrize("step", ["fsync", "replace"])
def test_a_failure_before_the_rename_leaves_the_old_content_and_no_temp_file(tmp_path: Path, monkeypatch, step):
    path = tmp_path / "state"
    path.write_bytes(b"old")
    Recorder(monkeypatch, fail_at=step)
    with pytest.raises(OSError, match="injected"):
        fs.write_atomically(path, b"new")
    assert path.read_bytes() == b"old"
    assert not temp_path(path).exists()


def test_a_crash_before_the_rename_leaves_the_old_content_beside_a_stray_temp_file(tmp_path: Path):
    # What a kill between writing the temp file and renaming it leaves on disk.
    path = tmp_path / "state"
    path.write_bytes(b"old")
    temp_path(path).write_bytes(b"half-writ")
    assert path.read_bytes() == b"old"
    fs.write_atomically(path, b"new")
    assert path.read_bytes() == b"new"
    assert not temp_path(path).exists()


def test_fsync_directory_fsyncs_the_directory_itself(tmp_path: Path, monkeypatch):
    recorder = Recorder(monkeypatch)
    fs.fsync_directory(tmp_path)
    assert recorder.calls == [("fsync", str(tmp_path))]
