"""Sending the requests: bounded concurrency, retries, the spending cap, the cache writes.

:func:`execute` takes the requests whose keys are not cached yet and returns, per key,
either the cache entry (written the moment the reply arrived) or ``{"error": ...}``.

What an answer must be before it counts:

* a reply text: empty ``choices`` or ``content: null`` (:class:`EmptyReplyError`) is asked
  again (3 attempts at most), then an error for the item; never cached. Its tokens are
  billed, so they are charged to the run's cost and its cap (the usage it reports, else
  the prompt counted locally);
* token counts that are non-negative whole numbers; others are an error for the item
  (:class:`UsageError`), never a cost, while a local estimate is still charged to the cap;
* missing counts (litellm reports 0 / 0) are counted locally (:func:`count_tokens`); when
  they cannot be, a capped run stops sending.

Every string of a stored entry is scrubbed of credentials (:func:`redact_all`). A failed
cache write keeps the answer for this run (``DispatchStats.n_unstored``).
"""

from __future__ import annotations

import asyncio
import math
import os
import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ._litellm import get_litellm
from .cache import MAX_TOKENS, JudgeCache, live_run
from .calls import JudgeCall
from .pricing import Price
from .retry import RetryPolicy, is_retryable, retry_after_seconds

__all__ = ["execute", "redact", "redact_all", "DispatchStats", "UsageError", "EmptyReplyError"]

_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.IGNORECASE)
#: Output tokens assumed per call for the ``max_cost`` estimate until replies are seen.
_DEFAULT_OUTPUT_TOKENS = 256


def redact(text: str | None) -> str | None:
    """``text`` with the value of every credential-like environment variable masked.

    Examples
    --------
    >>> import os; os.environ["DOC_API_KEY"] = "sk-doc-123456"
    >>> redact("auth sk-doc-123456 failed")
    'auth [REDACTED] failed'
    >>> del os.environ["DOC_API_KEY"]
    """
    if not text:
        return text
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) and value and len(value) >= 8 and value in text:
            text = text.replace(value, "[REDACTED]")
    return text


def redact_all(value: Any) -> Any:
    """``value`` with :func:`redact` applied to every string inside (dicts, lists, tuples).

    Examples
    --------
    >>> import os; os.environ["DOC_API_KEY"] = "sk-doc-123456"
    >>> redact_all({"model": "echo sk-doc-123456", "n": [1, "sk-doc-123456"]})
    {'model': 'echo [REDACTED]', 'n': [1, '[REDACTED]']}
    >>> del os.environ["DOC_API_KEY"]
    """
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {redact(k) if isinstance(k, str) else k: redact_all(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_all(v) for v in value]
    return value


class UsageError(ValueError):
    """The server reported token counts that are not non-negative whole numbers."""


class EmptyReplyError(ValueError):
    """The server answered without a reply text (no ``choices`` or ``content: null``).

    Handled like a transient failure: retried, and never cached.
    """


def _token_count(value: Any, name: str) -> int | None:
    """A reported token count as an int; ``None`` when absent; :class:`UsageError` if invalid."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value < 0 or value != int(value) \
            or value > MAX_TOKENS:
        raise UsageError(f"the server reported usage.{name} = {str(value)[:40]!r}, not a "
                         f"whole number from 0 to {MAX_TOKENS}: no cost can be computed "
                         "from it")
    return int(value)


def count_tokens(*, messages: list[dict[str, str]] | None = None,
                 text: str | None = None) -> int | None:
    """Tokens of a prompt or a reply, estimated locally with litellm's default tokenizer.

    The default (tiktoken, bundled with litellm) is used whatever the judge model: a
    model-specific tokenizer may have to be downloaded, and an estimate must work offline.
    Returns ``None`` when the tokens cannot be counted.

    Examples
    --------
    >>> count_tokens(text="hello there")
    2
    """
    try:
        counter = get_litellm().token_counter
        n = counter(model="", messages=messages) if messages is not None \
            else counter(model="", text=text or "")
    except Exception:  # noqa: BLE001 - any tokenizer failure means "cannot count"
        return None
    return n if isinstance(n, int) and n >= 0 else None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


@dataclass
class _Budget:
    """Running spend and the estimate reserved for calls in flight (``max_cost``)."""

    cap: float | None
    price: Price | None
    spent: float = 0.0
    reserved: float = 0.0
    out_tokens: list[int] = field(default_factory=list)

    def estimate(self, call: JudgeCall) -> float:
        if self.price is None:
            return 0.0
        n_in = sum(len(c) for _, c in call.messages) / 4
        n_out = (sum(self.out_tokens) / len(self.out_tokens)) if self.out_tokens \
            else _DEFAULT_OUTPUT_TOKENS
        return self.price.cost(int(n_in), int(n_out))

    def admit(self, est: float) -> bool:
        if self.cap is None:
            return True
        if self.spent + self.reserved + est > self.cap:
            return False
        self.reserved += est
        return True


@dataclass
class DispatchStats:
    n_calls: int = 0
    n_attempts: int = 0
    n_failed: int = 0
    cost: float = 0.0
    #: Replies counted locally because the server reported no usage.
    n_estimated: int = 0
    #: Replies kept in memory only because the cache write failed, and the first failure.
    n_unstored: int = 0
    store_error: str | None = None
    #: Set when a capped run had to stop: the cost of a reply could not be known.
    halt: str | None = None
    #: Answers another run sharing the cache obtained while this one waited (not paid here).
    n_shared: int = 0
    #: Answers whose reported token usage was invalid (negative, fractional, ...): no cost
    #: is recorded for them, but the provider billed them; this is their local estimate.
    n_uncounted: int = 0
    uncounted_cost: float = 0.0


async def _request_one(call: JudgeCall, key: str, *, model: str, api_base: str | None,
                       params: Mapping[str, Any], timeout: float, retry: RetryPolicy,
                       cache: JudgeCache, price: Price | None, stats: DispatchStats,
                       rng: random.Random, completion: Callable[..., Any]) -> dict[str, Any]:
    """One request with retries; returns the stored cache entry or ``{"error": ...}``."""
    last: BaseException | None = None
    stats.n_calls += 1
    # litellm prices every response itself; handing it the known price spares it a slow
    # search of its price list (the price does not change the reply: not in the cache key)
    pricing = {} if price is None else {"input_cost_per_token": price.input_per_token,
                                        "output_cost_per_token": price.output_per_token}
    wasted, n_empty = 0.0, 0      # USD of blank replies (billed, not answers)
    for attempt in range(1, retry.max_attempts + 1):
        stats.n_attempts += 1
        try:
            response = await asyncio.wait_for(
                completion(model=model, messages=call.chat(), api_base=api_base,
                           timeout=timeout, num_retries=0, max_retries=0, drop_params=True,
                           **pricing, **params),
                timeout=timeout * 1.5 + 5)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified just below
            last = exc
            if not is_retryable(exc) or attempt == retry.max_attempts:
                break
            await asyncio.sleep(retry.delay(attempt, retry_after_seconds(exc), rng))
            continue
        try:
            entry = _entry(call, model=model, params=params, response=response, price=price,
                           stats=stats)
        except EmptyReplyError as exc:
            last = exc
            # the tokens of a blank reply are billed (a reasoning model that ran out of
            # max_tokens answers so): charge them, and ask at most _EMPTY_REPLY_ATTEMPTS times
            wasted += _empty_reply_cost(call, response, price=price)
            n_empty += 1
            if attempt == retry.max_attempts or n_empty >= _EMPTY_REPLY_ATTEMPTS:
                break
            await asyncio.sleep(retry.delay(attempt, None, rng))
            continue
        except UsageError as exc:
            last = exc
            # tokens were spent but their number is unknown: charge a local estimate to the
            # cap, record no cost, and leave the items with an error (not cached)
            est = _estimate_cost(call, response, price=price)
            if est is None and price is not None:
                stats.halt = ("the server reported invalid token usage and the tokens could "
                              "not be counted locally")
            stats.n_uncounted += 1
            stats.uncounted_cost += est if est is not None else math.nan
            stats.cost += wasted
            return {"error": redact(f"UsageError: {exc}")[:500],
                    "charged_usd": est if est is not None else math.nan, "wasted_usd": wasted}
        # written in a worker thread: the flush to disk must not stall the other requests
        try:
            await asyncio.to_thread(cache.put, call.judge, key, entry)
        except OSError as exc:
            # the answer is paid for: keep it for this run's verdict table
            stats.n_unstored += 1
            if stats.store_error is None:
                stats.store_error = redact(f"{type(exc).__name__}: {exc}")[:300]
        stats.cost += (entry["cost_usd"] if entry["cost_usd"] is not None else math.nan) + wasted
        return {**entry, "wasted_usd": wasted} if n_empty else entry
    stats.n_failed += 1
    stats.cost += wasted
    kind = type(last).__name__ if last is not None else "Error"
    text = str(last) if last is not None else ""
    out = {"error": redact(f"{kind} after {attempt} attempt(s): {text}")[:500]}
    return {**out, "wasted_usd": wasted} if n_empty else out


#: Seconds between two looks at a request another run sharing the cache is asking.
_CLAIM_POLL_SECONDS = 0.2

#: Attempts of one request that may end in a blank reply before it is an error: a model
#: that answers blank (out of tokens) mostly does so again, and each blank reply is billed.
_EMPTY_REPLY_ATTEMPTS = 3


def _empty_reply_cost(call: JudgeCall, response: Any, *, price: Price | None) -> float:
    """USD of a blank reply: the usage it reports, else the prompt counted locally (NaN when
    it cannot be known; a capped run then stops, as for missing usage)."""
    if price is None:
        return math.nan
    try:
        n_in, n_out, _ = _usage_tokens(call, response, "")
    except UsageError:
        n_in, n_out = count_tokens(messages=call.chat()), 0
    if n_in is None:
        return math.nan
    return price.cost(n_in, n_out or 0)


def _estimate_cost(call: JudgeCall, response: Any, *, price: Price | None) -> float | None:
    """USD of a reply from locally counted tokens (``None`` when they cannot be counted)."""
    n_in = count_tokens(messages=call.chat())
    n_out = count_tokens(text=_reply_text(response) or "")
    if n_in is None or n_out is None or price is None:
        return None
    return price.cost(n_in, n_out)


def _reply_text(response: Any) -> str | None:
    try:
        raw = response.choices[0].message.content
    except (AttributeError, IndexError, TypeError, KeyError):
        return None
    return raw if isinstance(raw, str) else None


def _usage_tokens(call: JudgeCall, response: Any, reply: str,
                  ) -> tuple[int | None, int | None, bool]:
    """``(prompt tokens, reply tokens, estimated)`` of a response: as the server reported
    them, else counted locally (``estimated``; None when they cannot be counted).

    Raises
    ------
    UsageError
        Negative or non-numeric token counts.
    """
    usage = getattr(response, "usage", None)
    n_in = _token_count(getattr(usage, "prompt_tokens", None), "prompt_tokens")
    n_out = _token_count(getattr(usage, "completion_tokens", None), "completion_tokens")
    estimated = False
    # litellm reports 0 / 0 when the server sent no usage; a real prompt is never 0 tokens
    if not n_in:
        n_in, estimated = count_tokens(messages=call.chat()), True
    if n_out is None or (n_out == 0 and reply):
        n_out, estimated = count_tokens(text=reply), True
    return n_in, n_out, estimated


def _entry(call: JudgeCall, *, model: str, params: Mapping[str, Any], response: Any,
           price: Price | None, stats: DispatchStats) -> dict[str, Any]:
    """The cache entry for one reply, every string field scrubbed of credentials.

    Raises
    ------
    EmptyReplyError
        No reply text (retried like a transport failure).
    UsageError
        Negative or non-numeric token counts.
    """
    raw = _reply_text(response)
    if raw is None:
        raise EmptyReplyError("the server answered without a reply text (empty 'choices' or "
                              "'content: null')")
    n_in, n_out, estimated = _usage_tokens(call, response, raw)
    if estimated:
        stats.n_estimated += 1
        if (n_in is None or n_out is None) and price is not None:
            stats.halt = ("the server reported no token usage and the tokens could not be "
                          "counted locally")
    cost = price.cost(n_in, n_out) if price is not None else math.nan
    entry = {"judge": call.judge, "prompt_id": call.prompt_id,
             "prompt_version": call.prompt_version, "judge_model": model,
             "messages": call.chat(), "params": dict(params), "raw": raw,
             "input_tokens": n_in, "output_tokens": n_out, "tokens_estimated": estimated,
             "cost_usd": None if math.isnan(cost) else cost,
             "response_model": getattr(response, "model", None), "cached_at": _now()}
    return redact_all(entry)


async def execute(pending: Mapping[str, JudgeCall], *, model: str, api_base: str | None,
                   params: Mapping[str, Any], timeout: float, retry: RetryPolicy,
                   concurrency: int, cache: JudgeCache, price: Price | None,
                   max_cost: float | None, progress: bool, label: str,
                   completion: Callable[..., Any] | None, seed: int | None
                   ) -> tuple[dict[str, dict[str, Any]], DispatchStats]:
    if completion is None:
        completion = get_litellm().acompletion
    from tqdm import tqdm

    results: dict[str, dict[str, Any]] = {}
    stats = DispatchStats()
    budget = _Budget(max_cost, price)
    queue: asyncio.Queue[tuple[str, JudgeCall]] = asyncio.Queue()
    for item in pending.items():
        queue.put_nowait(item)
    rng = random.Random(seed)
    bar = tqdm(total=len(pending), desc=label, unit="call", disable=not progress,
               dynamic_ncols=True)

    async def worker() -> None:
        while True:
            try:
                key, call = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            # another run sharing the cache may have answered it meanwhile, or ask it now
            entry = await asyncio.to_thread(cache.get, call.judge, key)
            if entry is not None:
                results[key] = entry
                stats.n_shared += 1
                bar.update(1)
                continue
            if not await asyncio.to_thread(cache.claim, call.judge, key, run=run):
                queue.put_nowait((key, call))       # being asked by another run: wait
                await asyncio.sleep(_CLAIM_POLL_SECONDS)
                continue
            try:
                await _one(key, call)
            finally:   # at once, also when cancelled: a waiting run asks it then
                cache.release(call.judge, key, run=run)

    async def _one(key: str, call: JudgeCall) -> None:
        """Send one claimed request (within the cap) and record what came back."""
        est = budget.estimate(call)
        if max_cost is not None and stats.halt is not None:
            results[key] = {"error": f"not requested: max_cost cannot be enforced ("
                            f"{stats.halt}), so the capped run stopped"}
            bar.update(1)
            return
        if not budget.admit(est):
            results[key] = {"error": f"not requested: max_cost ${max_cost:g} reached "
                            f"(spent ${budget.spent:.4f})"}
            bar.update(1)
            return
        try:
            out = await _request_one(call, key, model=model, api_base=api_base,
                                     params=params, timeout=timeout, retry=retry,
                                     cache=cache, price=price, stats=stats, rng=rng,
                                     completion=completion)
        finally:
            budget.reserved -= est if max_cost is not None else 0.0
        results[key] = out
        wasted = out.pop("wasted_usd", 0.0)
        if max_cost is not None and math.isnan(wasted):
            stats.halt = ("a blank reply's tokens could not be counted, so its cost is "
                          "unknown")
        elif wasted:
            budget.spent += wasted
        charged = out.pop("charged_usd", None)
        if charged is not None:
            budget.spent += est if math.isnan(charged) else charged
        if "error" not in out:
            if out.get("cost_usd") is not None:
                budget.spent += out["cost_usd"]
            if isinstance(out.get("output_tokens"), int):
                budget.out_tokens.append(out["output_tokens"])
        bar.update(1)
        bar.set_postfix(cost=("?" if price is None else f"${stats.cost:.4f}"),
                        errors=stats.n_failed, refresh=False)

    try:
        with live_run() as run:
            await asyncio.gather(*(worker() for _ in range(min(concurrency,
                                                                max(1, len(pending))))))
    finally:
        bar.close()
    return results, stats
