"""``judge``: run an LLM judge over episodes through litellm — cached, resumable, costed.

Flow: episodes -> :class:`~accordkit.judges.calls.JudgeCall` s (the judge's templates) ->
cache keys -> requests for keys not in the cache (each key once, however many items share
it) -> replies stored as they arrive -> parsed into the verdict table.

* **Bounded concurrency**: ``concurrency`` workers share one asyncio event loop.
* **Retries**: rate limits (429), timeouts, connection failures and 5xx are retried up to
  ``max_attempts`` times with capped exponential backoff and jitter, waiting at least the
  server's ``Retry-After``. litellm's own retries are switched off (``num_retries=0``,
  ``max_retries=0``), so the count is the runner's.
* **Resumable**: every reply is written to the cache the moment it arrives; a crash or
  Ctrl-C loses at most the calls in flight, and a re-run requests only the missing keys.
* **Never guessed**: a malformed reply is the verdict ``"invalid"`` (cached, with the raw
  text); a call that still fails after its attempts leaves its items with an ``error`` and
  no verdict, and is tried again by the next run (exit code 2).
* **Costed**: tokens and USD per call from the explicit prices or litellm's price list;
  NaN with one warning for an unknown price. ``max_cost`` stops dispatching once the spend
  (plus an estimate for the calls in flight) would pass the cap.
* **Keys**: only from the environment, as litellm reads them. ``completion_kwargs`` may not
  carry one, and every stored string (reply, model name, error texts) is scrubbed of any
  credential found in the environment.
* **Disk failures**: the cache folder must take a file before anything is sent; a cache
  write that fails after a paid answer arrived keeps the answer in memory for the verdict
  table and warns (:class:`JudgeCacheWarning`).
"""

from __future__ import annotations

import asyncio
import math
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ._litellm import get_litellm
from .cache import JudgeCache, cache_key, default_cache_dir
from .calls import JudgeCall, JudgeSpec
from .dispatch import DispatchStats, execute
from .options import DEFAULT_PARAMS, JudgeOptions, check_shard, takes_options
from .pricing import Price
from .retry import RetryPolicy
from .verdicts import VERDICT_COLUMNS, judge_costs, judge_job, verdict_frame

__all__ = ["judge", "run_judge", "arun_judge", "JudgeRun", "JudgeOptions", "build_calls",
           "DEFAULT_PARAMS", "JudgeCacheWarning", "check_shard", "in_shard"]


class JudgeCacheWarning(UserWarning):
    """Some paid answers could not be stored in the cache (they are in the verdict table)."""

@dataclass(frozen=True)
class JudgeRun:
    """What one judge run produced and cost.

    Attributes
    ----------
    verdicts : DataFrame
        The verdict table (:mod:`accordkit.judges.verdicts`).
    judge, model : str
        The judge and judge model.
    n_episodes : int
        Episodes judged (after skipping).
    n_skipped : dict
        Episodes not judged, by reason (``"stored"``: already hold this judge's output;
        ``"benchmark"``: the judge does not apply).
    n_requests : int
        Distinct requests needed (identical requests count once).
    n_cached : int
        Of those, answered from the cache (also by another run sharing the cache folder
        that asked them while this run waited).
    n_calls : int
        Requested from the model in this run (each counted once, however many attempts).
    n_attempts : int
        HTTP attempts made, retries included.
    n_errors, n_invalid : int
        Items left without a verdict / with the verdict ``"invalid"``.
    cost_usd : float
        USD spent by this run (cache hits cost nothing; NaN with an unknown price).
    price : Price or None
        The price used.
    n_unstored : int
        Answers that could not be written to the cache (kept in this verdict table only;
        the next run requests them again).
    n_estimated : int
        Answers whose token counts were counted locally (the server reported none).
    n_uncounted : int
        Answers whose reported token usage was invalid (negative, fractional, not a
        number): they are errors with no cost, yet the provider billed them.
    uncounted_cost_usd : float
        The local estimate of what those answers cost (charged to ``max_cost``; NaN when
        it could not be counted), not part of ``cost_usd``.
    """

    verdicts: pd.DataFrame = field(repr=False)
    judge: str
    model: str
    n_episodes: int
    n_skipped: Mapping[str, int]
    n_requests: int
    n_cached: int
    n_calls: int
    n_attempts: int
    n_errors: int
    n_invalid: int
    cost_usd: float
    price: Price | None
    n_unstored: int = 0
    n_estimated: int = 0
    n_uncounted: int = 0
    uncounted_cost_usd: float = 0.0

    @property
    def exit_code(self) -> int:
        """0 when every item has a verdict (``invalid`` included), 2 when some have errors."""
        return 0 if self.n_errors == 0 else 2

    @property
    def cost_by_model(self) -> pd.DataFrame:
        """Tokens and cost of the verdict table per judge and model (:func:`judge_costs`)."""
        return judge_costs(self.verdicts)

    def summary(self) -> dict[str, Any]:
        """The counts as a plain dict (also stored in ``verdicts.attrs["judge_run"]``)."""
        return {"judge": self.judge, "model": self.model, "n_episodes": self.n_episodes,
                "n_skipped": dict(self.n_skipped), "n_items": len(self.verdicts),
                "n_requests": self.n_requests, "n_cached": self.n_cached,
                "n_calls": self.n_calls, "n_attempts": self.n_attempts,
                "n_errors": self.n_errors, "n_invalid": self.n_invalid,
                "cost_usd": self.cost_usd, "n_unstored": self.n_unstored,
                "n_estimated": self.n_estimated, "n_uncounted": self.n_uncounted,
                "uncounted_cost_usd": self.uncounted_cost_usd, "exit_code": self.exit_code}


# --------------------------------------------------------------------------- helpers


def _episodes(ds: Any) -> list[Mapping[str, Any]]:
    if hasattr(ds, "to_list"):
        return ds.to_list()
    if isinstance(ds, Mapping):
        return [ds]
    return list(ds)


def build_calls(episodes: Iterable[Mapping[str, Any]], spec: JudgeSpec, *,
                skip_stored: bool = True) -> tuple[list[JudgeCall], int, dict[str, int]]:
    """The calls a judge makes for ``episodes``.

    Returns
    -------
    calls : list of JudgeCall
    n_judged : int
        Episodes that were not skipped.
    skipped : dict
        Skipped episodes by reason (``"benchmark"``, ``"stored"``).
    """
    calls: list[JudgeCall] = []
    skipped = {"benchmark": 0, "stored": 0}
    n = 0
    for ep in episodes:
        if ep.get("benchmark") not in spec.benchmarks:
            skipped["benchmark"] += 1
            continue
        if skip_stored and spec.has_stored(ep):
            skipped["stored"] += 1
            continue
        n += 1
        calls.extend(spec.build(ep))
    return calls, n, skipped


class MissingCredentialsError(ValueError):
    """The provider of the judge model needs a key that the environment does not hold."""


def _check_credentials(model: str, api_base: str | None, *, n_pending: int,
                       n_cached: int) -> None:
    """Refuse to send when litellm says the model's provider key is not in the environment.

    Without it, every request would fail with an authentication error (stored as an error
    per item, "run again"); saying so first is clearer. Replies in the cache need no key.
    """
    try:
        found = get_litellm().validate_environment(model=model, api_base=api_base)
    except Exception:  # noqa: BLE001 - an unknown provider: let the request say what it needs
        return
    # only a missing API key is certain to fail: other names (AWS_*, VERTEXAI_*, an
    # OLLAMA_API_BASE) have defaults outside the environment (profiles, local servers)
    missing = [k for k in found.get("missing_keys") or [] if str(k).endswith("_API_KEY")]
    if missing:
        raise MissingCredentialsError(
            f"{' and '.join(missing)} not set in the environment: litellm needs it for "
            f"{model!r} (for a local OpenAI-compatible server, any value will do); "
            f"{n_pending} request(s) not sent, {n_cached} answered from the cache")


def _run_coroutine(coro: Any) -> Any:
    """Run ``coro`` to completion, also from inside a running loop (Jupyter).

    With a loop already running in this thread, the coroutine runs under ``asyncio.run`` in
    a worker thread; Ctrl-C (KeyboardInterrupt) cancels it there before re-raising, so the
    replies stored so far stay in the cache and nothing keeps running in the background.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: dict[str, Any] = {}
    started = threading.Event()

    async def main() -> Any:
        box["loop"], box["task"] = asyncio.get_running_loop(), asyncio.current_task()
        started.set()
        return await coro

    def target() -> None:
        try:
            box["result"] = asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - handed to the calling thread
            box["error"] = exc
        finally:
            started.set()

    thread = threading.Thread(target=target, name="accordkit-judge", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(timeout=0.1)
    except KeyboardInterrupt:
        started.wait()
        if "task" in box:
            box["loop"].call_soon_threadsafe(box["task"].cancel)
        thread.join(timeout=30)
        raise
    if "error" in box:
        raise box["error"]
    return box["result"]


def _rows(calls: Sequence[JudgeCall], keys: Sequence[str], outcomes: Mapping[str, dict],
          spec: JudgeSpec, model: str, price: Price | None) -> pd.DataFrame:
    cols: dict[str, list[Any]] = {c: [] for c in VERDICT_COLUMNS}
    charged: set[str] = set()
    for call, key in zip(calls, keys, strict=True):
        out = outcomes[key]
        if "error" in out:
            parsed = [(None, None)] * len(call.items)
        else:
            parsed = spec.parse(out.get("raw") or "", call)
        first = key not in charged and "error" not in out
        charged.add(key)
        cost = out.get("cost_usd")
        if cost is None and "error" not in out and price is not None:
            cost = price.cost(out.get("input_tokens"), out.get("output_tokens"))
        for i, (ref, (verdict, raw)) in enumerate(zip(call.items, parsed, strict=True)):
            charge = first and i == 0
            cols["episode_id"].append(ref.episode_id)
            cols["judge"].append(call.judge)
            cols["judge_model"].append(model)
            cols["prompt_id"].append(call.prompt_id)
            cols["prompt_version"].append(call.prompt_version)
            cols["item"].append(ref.item)
            cols["turn_idx"].append(ref.turn_idx)
            cols["verdict"].append(verdict)
            cols["raw"].append(raw)
            cols["error"].append(out.get("error"))
            if "error" in out:
                cols["input_tokens"].append(None)
                cols["output_tokens"].append(None)
                cols["cost_usd"].append(math.nan)
            else:
                cols["input_tokens"].append(out.get("input_tokens") if charge else 0)
                cols["output_tokens"].append(out.get("output_tokens") if charge else 0)
                unknown = cost is None or (isinstance(cost, float) and math.isnan(cost))
                cols["cost_usd"].append(math.nan if unknown else (cost if charge else 0.0))
            cols["cached_at"].append(out.get("cached_at"))
    return verdict_frame(cols)


# --------------------------------------------------------------------------- sharding


def in_shard(key: str, shard: tuple[int, int]) -> bool:
    """Whether the request with cache key ``key`` belongs to shard ``i`` of ``n``.

    The share is fixed by the key (a sha256), so n processes or machines given 1/n ... n/n
    split one job without talking to each other, and identical requests land together.
    """
    i, n = shard
    return int(key[:16], 16) % n == i - 1


# --------------------------------------------------------------------------- public API


@takes_options
async def arun_judge(
    ds: Any,
    *,
    options: JudgeOptions | None = None,
    _completion: Callable[..., Any] | None = None,
    _budget_factory: Callable[..., Any] | None = None,
    **keywords: Any,
) -> JudgeRun:
    """Async form of :func:`run_judge` (same parameters), for code that has a loop.

    ``_budget_factory`` makes the run's spending ledger (shared by the shards of a run on
    Ray, :mod:`accordkit.judges.ray_judge`)."""
    opts = JudgeOptions.from_call("arun_judge", options, keywords)
    judge, model, shard = opts.judge, opts.model, opts.shard
    spec = opts.spec
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        price = opts.price(warn=opts.max_cost is None)
    params = opts.request_params
    cache = JudgeCache(opts.cache_dir if opts.cache_dir is not None else default_cache_dir())
    calls, n_episodes, skipped = build_calls(_episodes(ds), spec, skip_stored=opts.skip_stored)
    keys = [cache_key(c, model=model, params=params) for c in calls]
    job = judge_job(judge=judge, model=model, keys=keys, shard=shard)
    if shard is not None:
        mine = [in_shard(k, shard) for k in keys]
        calls = [c for c, m in zip(calls, mine, strict=True) if m]
        keys = [k for k, m in zip(keys, mine, strict=True) if m]
    unique: dict[str, JudgeCall] = {}
    for key, call in zip(keys, calls, strict=True):
        unique.setdefault(key, call)
    cache.remove_stale_temp()
    outcomes: dict[str, dict[str, Any]] = {}
    pending: dict[str, JudgeCall] = {}
    for key, call in unique.items():
        entry = cache.get(call.judge, key)
        if entry is not None:
            outcomes[key] = entry
        else:
            pending[key] = call
    stats = DispatchStats()
    if pending:
        cache.check_writable()          # before any paid request
        opts.check_storable()           # the same: an answer that cannot be stored is lost
        if _completion is None and "mock_response" not in params:
            _check_credentials(model, opts.api_base, n_pending=len(pending),
                               n_cached=len(unique) - len(pending))
        base, cap = opts.backoff
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            results, stats = await execute(
                pending, model=model, api_base=opts.api_base, params=params,
                timeout=opts.timeout,
                retry=RetryPolicy(max_attempts=opts.max_attempts, base=base, cap=cap),
                concurrency=opts.concurrency, cache=cache, price=price,
                max_cost=opts.max_cost, progress=opts.progress,
                label=f"judge {judge} · {model}", completion=_completion, seed=opts.seed,
                budget_factory=_budget_factory)
        _warn_again_redacted(caught)
        outcomes.update(results)
    if stats.n_unstored:
        warnings.warn(f"{stats.n_unstored} judge answer(s) could not be written to the cache "
                      f"{str(cache.root)!r} ({stats.store_error}); they are in this verdict "
                      "table, but a later run will request them again: save the table now",
                      JudgeCacheWarning, stacklevel=2)
    verdicts = _rows(calls, keys, outcomes, spec, model, price)
    n_errors = int(verdicts["error"].notna().sum())
    run = JudgeRun(
        verdicts=verdicts, judge=judge, model=model, n_episodes=n_episodes, n_skipped=skipped,
        n_requests=len(unique), n_cached=len(unique) - len(pending) + stats.n_shared,
        n_calls=stats.n_calls,
        n_attempts=stats.n_attempts, n_errors=n_errors,
        n_invalid=int((verdicts["verdict"] == "invalid").sum()),
        cost_usd=stats.cost, price=price, n_unstored=stats.n_unstored,
        n_estimated=stats.n_estimated, n_uncounted=stats.n_uncounted,
        uncounted_cost_usd=stats.uncounted_cost)
    verdicts.attrs["judge_run"] = run.summary()
    verdicts.attrs["judge_job"] = {**job, "shard_requests": len(unique)}
    return run


@takes_options
def run_judge(
    ds: Any,
    *,
    options: JudgeOptions | None = None,
    _completion: Callable[..., Any] | None = None,
    _budget_factory: Callable[..., Any] | None = None,
    **keywords: Any,
) -> JudgeRun:
    """Judge episodes and return the verdicts with the run's counts and cost.

    Same parameters as :func:`judge`; returns a :class:`JudgeRun` (``.verdicts``,
    ``.exit_code``, ``.n_calls``, ``.n_cached``, ``.n_errors``, ``.cost_usd``,
    ``.cost_by_model``).

    Examples
    --------
    >>> run = run_judge(ds, judge="gsrt", model="gpt-4o-mini")     # doctest: +SKIP
    >>> run.exit_code, run.n_calls, run.cost_usd                    # doctest: +SKIP
    (0, 13, 0.0042)
    """
    opts = JudgeOptions.from_call("run_judge", options, keywords)
    return _run_coroutine(arun_judge(ds, options=opts, _completion=_completion,
                                     _budget_factory=_budget_factory))


@takes_options
def judge(ds: Any, *, options: JudgeOptions | None = None, **keywords: Any) -> pd.DataFrame:
    """Judge episodes with an LLM through litellm and return the verdict table.

    Parameters
    ----------
    ds : datasets.Dataset or iterable of episode dicts
        Canonical episodes (:func:`accordkit.load`). Episodes of other benchmarks than the
        judge's are skipped.
    .. the fields of JudgeOptions go here
    options : JudgeOptions, optional
        All of the above in one object (:class:`~accordkit.judges.JudgeOptions`), instead
        of keywords. A keyword given beside it must equal the object's value (else
        ``TypeError``).

    Returns
    -------
    pandas.DataFrame
        The verdict table (columns :data:`accordkit.judges.VERDICT_COLUMNS`); the run's
        counts are in ``.attrs["judge_run"]`` (``exit_code`` 0 when every item has a
        verdict, 2 when some still have errors). Use :func:`run_judge` for the full
        :class:`JudgeRun`.

    Raises
    ------
    ValueError
        Bad options, or ``max_cost`` without a known price (before any request).
    TypeError
        An unknown keyword, ``judge`` or ``model`` missing, or a keyword that differs from
        ``options``.
    CacheNotWritableError
        The cache folder cannot take a file (checked before any request).

    Warns
    -----
    JudgeCacheWarning
        Some answers could not be written to the cache; they are in the returned table.

    Examples
    --------
    >>> import accordkit as ak
    >>> ds = ak.load("data/sample/goalshift")                                # doctest: +SKIP
    >>> v = ak.judge(ds, judge="nl_assertions", model="gpt-4o-mini",
    ...              skip_stored=False)                                      # doctest: +SKIP
    >>> v.attrs["judge_run"]["exit_code"]                                    # doctest: +SKIP
    0
    >>> from accordkit.judges import JudgeOptions
    >>> opts = JudgeOptions(judge="gsrt", model="gpt-4o-mini", max_cost=5)
    >>> v = ak.judge(ds, options=opts)                                       # doctest: +SKIP
    """
    opts = JudgeOptions.from_call("judge", options, keywords)
    return run_judge(ds, options=opts).verdicts


def _warn_again_redacted(caught: list[warnings.WarningMessage]) -> None:
    """Emit again the warnings of a judge run's requests, each once, with every credential
    masked (:func:`~accordkit.judges.dispatch.redact`): litellm and pydantic warnings may
    quote a reply, and a server may echo the request's ``Authorization`` header in it.

    pydantic's warning about litellm's own types (the ``ReadOnly`` qualifier) is dropped:
    not ours to fix, and said on every first request.
    """
    from .dispatch import redact

    seen = set()
    for w in caught:
        text = redact(str(w.message)) or ""
        if "`ReadOnly` qualifier" in text or (w.category, text) in seen:
            continue
        seen.add((w.category, text))
        warnings.warn(text, category=w.category, stacklevel=3)
