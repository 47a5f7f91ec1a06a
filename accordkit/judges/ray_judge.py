"""Judge runs on Ray: the requests in shards, each shard a Ray task, one cache, one cap.

``accordkit judge ... --engine ray`` splits a job as ``--shard I/N`` does (a request's
shard is fixed by its hash) and runs every shard as a Ray task on the cluster at
``RAY_ADDRESS`` (else a local Ray). Each task is a whole judge run over its share
(:func:`~accordkit.judges.runner.run_judge`), so the promises of a local run hold:

* **one cache**: every shard reads and writes the same cache folder (a shared file system
  on a real cluster); replies are stored the moment they arrive, shards never ask the
  same request, and a later run asks only what is missing;
* **one cap**: the shards share one spending ledger (a Ray actor on the driver's node),
  so ``max_cost`` caps the whole run, not each shard;
* **a lost node**: Ray runs the shard of a dead node again elsewhere (``max_retries``
  times); the new attempt finds every answer the lost one stored in the cache and asks
  only the rest. Calls that were in flight on the lost node are asked again (their answers
  never arrived; the claims the lost attempt held on them are removed, see
  :func:`drop_claims`), and their reserved cost stays counted against the cap (they may
  have been billed).

The verdict tables of the shards are combined with
:func:`~accordkit.judges.merge.merge_verdicts`: the same rows as one local run.
API keys are read on each node from its own environment (they are never sent along).
"""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dispatch import _Budget
from .options import JudgeOptions, takes_options

__all__ = ["run_judge_on_ray", "SharedBudget", "drop_claims", "DEFAULT_MAX_RETRIES"]

#: Times Ray runs a shard again after losing its node (or worker process).
DEFAULT_MAX_RETRIES = 3


class _Ledger:
    """Spend and reservations of every shard of a run (the body of a Ray actor)."""

    def __init__(self, cap: float | None) -> None:
        self.cap = cap
        self.spent = 0.0
        self.reserved = 0.0
        self.attempts: dict[str, list[tuple[str, int]]] = {}

    def attempt(self, shard: str, host: str, pid: int) -> list[tuple[str, int]]:
        """Record an attempt of ``shard`` by process ``pid`` of ``host``; returns the
        earlier attempts of that shard (whose node or worker was lost)."""
        earlier = list(self.attempts.get(shard, []))
        self.attempts.setdefault(shard, []).append((host, pid))
        return earlier

    def admit(self, est: float) -> tuple[bool, float]:
        """Reserve ``est`` USD when the cap allows it; returns (admitted, spent so far)."""
        if self.cap is not None and self.spent + self.reserved + est > self.cap:
            return False, self.spent
        self.reserved += est
        return True, self.spent

    def release(self, est: float) -> None:
        self.reserved -= est

    def charge(self, usd: float) -> None:
        self.spent += usd

    def totals(self) -> dict[str, float]:
        return {"spent": self.spent, "reserved": self.reserved}


@dataclass
class SharedBudget(_Budget):
    """A shard's view of its run's :class:`_Ledger`: admissions ask the ledger (one round
    trip per request of a capped run); releases and charges are sent without waiting (a
    caller's calls to an actor run in the order they were sent)."""

    ledger: Any = None

    def admit(self, est: float) -> bool:
        if self.cap is None:
            return True
        import ray

        ok, self.spent = ray.get(self.ledger.admit.remote(est))
        return ok

    def release(self, est: float) -> None:
        self.ledger.release.remote(est)

    def charge(self, usd: float) -> None:
        self.spent += usd
        self.ledger.charge.remote(usd)


def _judge_shard(episodes: list[dict[str, Any]], *, options: JudgeOptions,
                 ledger: Any) -> dict[str, Any]:
    """One shard's judge run (a Ray task; ``options.shard`` names the shard); returns its
    verdicts, counts and node."""
    import socket

    import ray

    from .runner import run_judge

    shard = options.shard
    lost = ray.get(ledger.attempt.remote(f"{shard[0]}/{shard[1]}", socket.gethostname(),
                                         os.getpid()))
    if lost:
        drop_claims(options.cache_dir, holders=lost)
    run = run_judge(episodes, options=options,
                    _budget_factory=functools.partial(SharedBudget, ledger=ledger))
    # a caller's calls to an actor run in order: once this returns, the ledger has every
    # charge this shard sent (the driver reads its total when all shards are done)
    ray.get(ledger.totals.remote())
    return {"shard": shard, "node_id": ray.get_runtime_context().get_node_id(),
            "verdicts": run.verdicts, "summary": run.summary(), "price": run.price}


def drop_claims(cache_dir: str | Path, *, holders: list[tuple[str, int]]) -> int:
    """Remove the request claims that the processes ``holders`` (``(host, pid)`` pairs: the
    lost attempts of a shard) left in the cache; returns how many.

    A judge run claims each request it sends (:meth:`JudgeCache.claim`), so that runs
    sharing a cache do not ask it twice. The claims of a process on another machine count
    as live until :data:`~accordkit.judges.cache.CLAIM_STALE_SECONDS` have passed; a shard
    run again after its node was lost would wait that long for its own calls that were in
    flight there. The ledger knows which processes ran the lost attempts, so their claims
    are removed at once (the shard's requests are claimed by no other shard).

    Examples
    --------
    >>> import json, tempfile
    >>> root = Path(tempfile.mkdtemp()) / "gsrt" / "ab"
    >>> root.mkdir(parents=True)
    >>> _ = (root / "ab12.claim").write_text(json.dumps({"host": "n2", "pid": 7, "run": "r"}))
    >>> _ = (root / "ab34.claim").write_text(json.dumps({"host": "n3", "pid": 7, "run": "s"}))
    >>> drop_claims(root.parents[1], holders=[("n2", 7)])
    1
    >>> sorted(p.name for p in root.iterdir())
    ['ab34.claim']
    """
    import json

    gone = {(str(host), int(pid)) for host, pid in holders}
    n = 0
    for path in Path(cache_dir).glob("*/*/*.claim"):
        try:
            holder = json.loads(path.read_text(encoding="utf-8"))
            if (str(holder.get("host")), holder.get("pid")) in gone:
                path.unlink()
                n += 1
        except (OSError, ValueError, AttributeError):
            continue        # released meanwhile, or not a claim of ours
    return n


def _driver_node_affinity() -> Any:
    """Keep the ledger on the driver's node: it must outlive any worker node."""
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    try:
        return NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(),
                                              soft=False)
    except Exception:  # noqa: BLE001 - a Ray Client driver has no node: Ray's choice
        return "DEFAULT"


@takes_options
def run_judge_on_ray(ds: Any, *, shards: int | None = None,
                     max_retries: int = DEFAULT_MAX_RETRIES,
                     options: JudgeOptions | None = None, **keywords: Any) -> Any:
    """Judge ``ds`` in ``shards`` Ray tasks and return one :class:`JudgeRun`.

    Parameters
    ----------
    ds : datasets.Dataset or iterable of episode dicts
        Canonical episodes; sent to the tasks through Ray's object store.
    shards : int, optional
        Ray tasks; default the cluster's CPUs (a local Ray: this machine's). Each runs
        with ``concurrency`` requests in flight, so the run has up to
        ``shards * concurrency``.
    max_retries : int
        Times a shard is run again after its node (or worker) is lost.
    options : JudgeOptions, optional
        The run's options in one object, or each as a keyword (the same as
        :func:`~accordkit.judges.run_judge`'s, see
        :class:`~accordkit.judges.JudgeOptions`). Here ``max_cost`` caps the whole run,
        ``progress`` is a bar of finished shards (the shards show none), and ``shard``
        is refused: the run splits itself (``--shard`` is for runs split by hand).

    Returns
    -------
    JudgeRun
        Verdicts of every shard merged (:func:`merge_verdicts`: the whole job, which its
        ``attrs["judge_job"]`` names as a single run's table does), counts summed. ``cost_usd``
        is what the run spent, a lost shard attempt's answered calls included (its retry
        reads them from the cache: ``n_cached``). ``verdicts.attrs["judge_run"]["ray"]``
        lists each shard's node and counts.

    Raises
    ------
    ValueError
        Bad options (checked here, before any task), or a shard's own refusal (a missing
        API key on its node, ...).
    RuntimeError
        A shard lost its node more than ``max_retries`` times (the answers it got are in
        the cache: run again).

    Examples
    --------
    >>> run = run_judge_on_ray(ak.load("run.json"), judge="gsrt", model="gpt-4o-mini",
    ...                        max_cost=5)                              # doctest: +SKIP
    >>> run.exit_code, run.n_calls, run.cost_usd                        # doctest: +SKIP
    (0, 412, 1.37)
    """
    import ray

    from .._internal.ray_cluster import cluster_nodes, ray_session
    from .cache import JudgeCache, default_cache_dir
    from .merge import merge_verdicts
    from .runner import JudgeRun, _episodes

    if keywords.get("shard") is not None or (options is not None and options.shard is not None):
        raise ValueError("shard and the ray engine do not go together: a run on Ray splits "
                         "itself (see shards)")
    if shards is not None and (not isinstance(shards, int) or isinstance(shards, bool)
                               or shards < 1):
        raise ValueError(f"shards must be a positive integer, got {shards!r}")
    opts = JudgeOptions.from_call("run_judge_on_ray", options, keywords)
    judge, model = opts.judge, opts.model
    price = opts.price(warn=False)
    cache = JudgeCache(Path(opts.cache_dir if opts.cache_dir is not None
                            else default_cache_dir()).resolve())   # not the tasks' folder
    cache.check_writable()
    episodes = _episodes(ds)
    with ray_session(num_cpus=shards or os.cpu_count() or 1):
        n = shards or max(1, sum(node["cpus"] for node in cluster_nodes() if node["alive"]))
        ledger = ray.remote(_Ledger).options(
            num_cpus=0, max_restarts=0, scheduling_strategy=_driver_node_affinity(),
        ).remote(opts.max_cost)
        task = ray.remote(_judge_shard).options(num_cpus=1, max_retries=max_retries,
                                                retry_exceptions=False,
                                                scheduling_strategy="SPREAD")
        shared = ray.put(episodes)
        each = opts.replace(cache_dir=str(cache.root), progress=False)
        pending = [task.remote(shared, options=each.replace(shard=(i, n)), ledger=ledger)
                   for i in range(1, n + 1)]
        results = _gather(pending, progress=opts.progress,
                          label=f"judge {judge} · {model} on Ray")
        spent = ray.get(ledger.totals.remote())["spent"]
    summaries = [r["summary"] for r in results]
    verdicts = merge_verdicts([r["verdicts"] for r in results])
    shard_cost = [s["cost_usd"] for s in summaries]
    cost = math.nan if any(math.isnan(c) for c in shard_cost) else spent
    first = summaries[0]
    run = JudgeRun(
        verdicts=verdicts, judge=judge, model=model, n_episodes=first["n_episodes"],
        n_skipped=first["n_skipped"], n_requests=sum(s["n_requests"] for s in summaries),
        n_cached=sum(s["n_cached"] for s in summaries),
        n_calls=sum(s["n_calls"] for s in summaries),
        n_attempts=sum(s["n_attempts"] for s in summaries),
        n_errors=int(verdicts["error"].notna().sum()),
        n_invalid=int((verdicts["verdict"] == "invalid").sum()), cost_usd=cost,
        price=results[0]["price"] or price,
        n_unstored=sum(s["n_unstored"] for s in summaries),
        n_estimated=sum(s["n_estimated"] for s in summaries),
        n_uncounted=sum(s["n_uncounted"] for s in summaries),
        uncounted_cost_usd=sum(s["uncounted_cost_usd"] for s in summaries))
    verdicts.attrs["judge_run"] = {**run.summary(), "ray": [
        {"shard": f"{r['shard'][0]}/{r['shard'][1]}", "node_id": r["node_id"],
         **{k: r["summary"][k] for k in ("n_requests", "n_cached", "n_calls", "n_errors")}}
        for r in results]}
    return run


def _gather(pending: list[Any], *, progress: bool, label: str) -> list[dict[str, Any]]:
    """The shards' results in shard order, waiting for each; a shard's own error is raised
    as it is (not wrapped in Ray's), a shard lost too often as RuntimeError."""
    import ray
    from tqdm.auto import tqdm

    order = {ref: k for k, ref in enumerate(pending)}
    out: list[dict[str, Any] | None] = [None] * len(pending)
    left = list(pending)
    with tqdm(total=len(pending), desc=label, unit="shard", disable=not progress) as bar:
        while left:
            done, left = ray.wait(left, num_returns=1)
            for ref in done:
                k = order[ref]
                try:
                    out[k] = ray.get(ref)
                except ray.exceptions.RayTaskError as exc:
                    for ref_left in left:
                        ray.cancel(ref_left, force=True)
                    cause = exc.cause if isinstance(exc.cause, Exception) else exc
                    raise cause from None
                except ray.exceptions.RayError as exc:
                    for ref_left in left:
                        ray.cancel(ref_left, force=True)
                    raise RuntimeError(
                        f"shard {k + 1}/{len(pending)} of the judge run was lost more than "
                        f"its retries allow ({type(exc).__name__}); the answers it got are "
                        "in the cache: run the same command again") from None
                bar.update()
    return [r for r in out if r is not None]
