"""One writer per output folder (``accordkit._internal.lock``)."""

from __future__ import annotations

import os

import pytest

from accordkit._internal import lock as _lock


class Busy(RuntimeError):
    pass


def _busy(owner):
    return Busy(owner)


def test_the_lock_is_beside_the_folder_and_gone_after(tmp_path):
    out = tmp_path / "deep" / "out"
    with _lock.held(out, _busy) as lock:
        assert lock == tmp_path / "deep" / ".out.lock"
        assert lock.read_text() == str(os.getpid())
        assert not out.exists(), "the folder itself is not touched"
    assert not lock.exists()


def test_a_lock_of_a_live_process_stops_a_second_writer(tmp_path):
    out = tmp_path / "out"
    _lock.lock_path(out).write_text(str(os.getppid()))  # a process that runs
    with pytest.raises(Busy) as err, _lock.held(out, _busy):
        pass
    assert err.value.args == (os.getppid(),)
    assert _lock.lock_path(out).read_text() == str(os.getppid()), "its lock is left alone"


def test_a_lock_left_by_a_dead_process_is_taken_over(tmp_path, monkeypatch):
    out = tmp_path / "out"
    _lock.lock_path(out).write_text("999999")
    monkeypatch.setattr(_lock, "pid_alive", lambda pid: False)
    with _lock.held(out, _busy) as lock:
        assert lock.read_text() == str(os.getpid())
    assert not lock.exists()


def test_the_lock_is_released_when_the_body_fails(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(ZeroDivisionError), _lock.held(out, _busy):
        1 / 0  # noqa: B018
    assert not _lock.lock_path(out).exists()


def test_pid_alive():
    assert _lock.pid_alive(os.getpid())


def test_taking_the_lock_is_one_at_a_time(tmp_path):
    """A run that has created the lock file but not yet written its id in it is not taken
    for a dead one: a second run waits for it, then finds it alive."""
    import threading
    import time

    out = tmp_path / "out"
    lock = _lock.lock_path(out)
    found = {}

    def second_run():
        try:
            _lock.acquire(lock, _busy)
        except Busy as exc:
            found["busy"] = exc.args[0]

    with _lock._one_at_a_time(tmp_path):  # the first run, inside acquire
        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        waiting = threading.Thread(target=second_run)
        waiting.start()
        time.sleep(0.2)
        assert waiting.is_alive(), "the second run waits"
        os.write(fd, str(os.getppid()).encode())  # a process that runs
        os.close(fd)
    waiting.join(10)
    assert found == {"busy": os.getppid()}
