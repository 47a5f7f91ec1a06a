"""Sending the requests: bounded concurrency, retries, the spending cap, the cache writes.

:func:`execute` takes the requests whose keys are not cached yet and returns, per key,
either the stored cache entry (written the moment the reply arrived) or ``{"error": ...}``.
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
from .cache import JudgeCache
from .calls import JudgeCall
from .pricing import Price
from .retry import RetryPolicy, is_retryable, retry_after_seconds

__all__ = ["execute", "redact", "DispatchStats"]

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
            raw = response.choices[0].message.content
        except (AttributeError, IndexError, TypeError):
            raw = None
        usage = getattr(response, "usage", None)
        n_in = getattr(usage, "prompt_tokens", None)
        n_out = getattr(usage, "completion_tokens", None)
        cost = price.cost(n_in, n_out) if price is not None else math.nan
        entry = {"judge": call.judge, "prompt_id": call.prompt_id,
                 "prompt_version": call.prompt_version, "judge_model": model,
                 "messages": call.chat(), "params": dict(params),
                 "raw": redact(raw if isinstance(raw, str) else ""),
                 "input_tokens": n_in, "output_tokens": n_out,
                 "cost_usd": None if math.isnan(cost) else cost,
                 "response_model": getattr(response, "model", None), "cached_at": _now()}
        # written in a worker thread: the flush to disk must not stall the other requests
        await asyncio.to_thread(cache.put, call.judge, key, entry)
        stats.cost += cost
        return entry
    stats.n_failed += 1
    kind = type(last).__name__ if last is not None else "Error"
    text = str(last) if last is not None else ""
    return {"error": redact(f"{kind} after {attempt} attempt(s): {text}")[:500]}


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
            est = budget.estimate(call)
            if not budget.admit(est):
                results[key] = {"error": f"not requested: max_cost ${max_cost:g} reached "
                                f"(spent ${budget.spent:.4f})"}
                bar.update(1)
                continue
            try:
                out = await _request_one(call, key, model=model, api_base=api_base,
                                         params=params, timeout=timeout, retry=retry,
                                         cache=cache, price=price, stats=stats, rng=rng,
                                         completion=completion)
            finally:
                budget.reserved -= est if max_cost is not None else 0.0
            results[key] = out
            if "error" not in out:
                if out.get("cost_usd") is not None:
                    budget.spent += out["cost_usd"]
                if isinstance(out.get("output_tokens"), int):
                    budget.out_tokens.append(out["output_tokens"])
            bar.update(1)
            bar.set_postfix(cost=("?" if price is None else f"${stats.cost:.4f}"),
                            errors=stats.n_failed, refresh=False)

    try:
        await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(pending))))))
    finally:
        bar.close()
    return results, stats
