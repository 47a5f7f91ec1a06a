"""Backoff with jitter, Retry-After, and which failures are retried."""

from __future__ import annotations

import random
from email.utils import formatdate
from time import time

import httpx
import pytest

from accordkit.judges._litellm import get_litellm
from accordkit.judges.retry import RetryPolicy, is_retryable, retry_after_seconds


def test_delay_grows_exponentially_within_the_cap():
    policy = RetryPolicy(base=1.0, cap=10.0)
    rng = random.Random(1)
    for attempt, (lo, hi) in {1: (0.5, 1), 2: (1, 2), 3: (2, 4), 4: (4, 8), 9: (5, 10)}.items():
        waits = [policy.delay(attempt, None, rng) for _ in range(50)]
        assert lo <= min(waits) and max(waits) <= hi
        assert len(set(waits)) > 1          # jittered


def test_retry_after_is_a_floor_capped_by_max_retry_after():
    policy = RetryPolicy(base=0.01, cap=0.02, max_retry_after=30)
    assert policy.delay(1, 3.0, random.Random(0)) == 3.0
    assert policy.delay(1, 1e6, random.Random(0)) == 30


def _litellm_error(cls, status, headers=None):
    response = httpx.Response(status, headers=headers or {},
                              request=httpx.Request("POST", "http://127.0.0.1/v1"))
    return cls(message="x", llm_provider="openai", model="m", response=response)


def test_retryable_classes():
    litellm = get_litellm()

    assert is_retryable(_litellm_error(litellm.RateLimitError, 429))
    assert is_retryable(_litellm_error(litellm.InternalServerError, 500))
    assert is_retryable(litellm.Timeout(message="t", model="m", llm_provider="openai"))
    assert is_retryable(TimeoutError())
    assert not is_retryable(_litellm_error(litellm.AuthenticationError, 401))
    assert not is_retryable(_litellm_error(litellm.BadRequestError, 400))
    missing_key = litellm.InternalServerError(
        message="OpenAIException - Missing credentials. Please pass an `api_key`",
        llm_provider="openai", model="m")
    assert not is_retryable(missing_key)


@pytest.mark.parametrize("header, expected", [("7", 7.0), ("0.5", 0.5), (None, None)])
def test_retry_after_seconds(header, expected):
    litellm = get_litellm()

    exc = _litellm_error(litellm.RateLimitError, 429,
                         {"Retry-After": header} if header is not None else {})
    assert retry_after_seconds(exc) == expected


def test_retry_after_http_date():
    litellm = get_litellm()

    exc = _litellm_error(litellm.RateLimitError, 429, {"Retry-After": formatdate(time() + 20)})
    assert 15 <= retry_after_seconds(exc) <= 21
