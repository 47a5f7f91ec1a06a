"""Which judge-call failures are retried, and how long to wait before the next attempt."""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from dataclasses import dataclass
from typing import Any

from ._litellm import get_litellm

__all__ = ["RetryPolicy", "is_retryable", "retry_after_seconds"]

#: HTTP statuses worth another attempt: timeout, conflict/lock, rate limit, server errors.
RETRY_STATUSES = frozenset({408, 409, 429})
#: Configuration errors that litellm reports as server errors: retrying cannot help.
_CONFIG_ERRORS = re.compile(r"Missing credentials|api_key client option must be set|"
                            r"No API key provided|LLM Provider NOT provided", re.IGNORECASE)


@dataclass(frozen=True)
class RetryPolicy:
    """Capped exponential backoff with jitter; ``Retry-After`` is honoured.

    Attributes
    ----------
    max_attempts : int
        Attempts per request, the first included (litellm's own retries are off).
    base, cap : float
        Seconds: attempt ``n`` (1-based) waits a random time in
        ``[b/2, b]`` with ``b = min(cap, base * 2**(n-1))``.
    max_retry_after : float
        A longer ``Retry-After`` is cut to this many seconds.

    Examples
    --------
    >>> p = RetryPolicy(base=1.0, cap=8.0)
    >>> 1.0 <= p.delay(2, None, random.Random(0)) <= 2.0
    True
    >>> p.delay(1, 5.0, random.Random(0)) >= 5.0
    True
    """

    max_attempts: int = 10
    base: float = 1.0
    cap: float = 60.0
    max_retry_after: float = 600.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        ceiling = min(self.cap, self.base * 2 ** (attempt - 1))
        wait = ceiling / 2 + rng.random() * ceiling / 2
        if retry_after is not None and retry_after > 0:
            wait = max(wait, min(retry_after, self.max_retry_after))
        return wait


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, timeouts, connection failures and 5xx answers are retried; others not.

    A missing API key, which litellm raises as a server error, is not retried.

    Examples
    --------
    >>> is_retryable(TimeoutError())
    True
    >>> is_retryable(ValueError("bad request"))
    False
    """
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | ConnectionError):
        return True
    if _CONFIG_ERRORS.search(str(exc)):
        return False
    litellm = get_litellm()
    transient = (litellm.RateLimitError, litellm.InternalServerError,
                 litellm.ServiceUnavailableError, litellm.Timeout, litellm.APIConnectionError,
                 litellm.BadGatewayError)
    if isinstance(exc, transient):
        return True
    status = _status(exc)
    return status is not None and (status in RETRY_STATUSES or status >= 500)


def retry_after_seconds(exc: BaseException) -> float | None:
    """The ``Retry-After`` of a failed call's HTTP answer, in seconds (``None`` if absent).

    Accepts both forms of the header: a number of seconds or an HTTP date.
    """
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    parsed = email.utils.parsedate_tz(str(value))
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - time.time())
