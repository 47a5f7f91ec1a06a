"""Stopping a process pool now, not after its queue: for Ctrl-C and SIGTERM.

``ProcessPoolExecutor``'s own exit waits for every submitted task, queued ones included;
an interrupted command must instead cancel what has not started and end what runs (and
what that started: a report's notebook kernels), or it outlives the command.
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

__all__ = ["stop_pool"]


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued tasks of ``pool`` and terminate its workers and their children."""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    children = []
    try:
        import psutil

        for proc in workers:
            try:
                children += psutil.Process(proc.pid).children(recursive=True)
            except psutil.Error:
                continue
    except ImportError:  # pragma: no cover - psutil comes with ipykernel
        pass
    pool.shutdown(wait=False, cancel_futures=True)
    # killed, not asked: what they were computing is discarded, and a worker asked to stop
    # would first wind down its kernel (seconds each)
    for proc in workers:
        if proc.is_alive():
            proc.kill()
    for child in children:
        try:
            child.kill()
        except Exception:  # noqa: BLE001 - already gone
            continue
    for proc in workers:
        proc.join(timeout=5)
