"""The runner against litellm's mock responses and a stand-in server with injected faults."""

from __future__ import annotations

import asyncio
import json
import math
import re
import warnings

import pandas as pd
import pytest

from accordkit.judges import arun_judge, judge, run_judge
from accordkit.judges.cache import JudgeCache
from accordkit.judges.pricing import UnknownPriceWarning

from .episodes import GSRT_REPLY, acb_episode
from .stub_server import Fault, last_user_text

NL_REPLY = json.dumps({"results": [{"index": 0, "met": True, "justification": "a"},
                                   {"index": 1, "met": False, "justification": "b"}]})
FAST = {"backoff": (0.01, 0.05), "progress": False}


def _episode_tag(body) -> str | None:
    m = re.search(r"lock my card \((ep\d+)\)", last_user_text(body))
    return m.group(1) if m else None


def _stub_options(server) -> dict:
    return {"api_base": server.base_url, "model": "openai/stub-judge", "price_in": 1.0,
            "price_out": 2.0, **FAST}


# --------------------------------------------------------------------------- mock_response


def test_mock_response_verdicts_costs_dedup_and_cache(tmp_path):
    eps = [acb_episode("ep0"), acb_episode("ep1")]
    twin = dict(eps[0], episode_id="agentchangebench/twin")   # same request as ep0
    eps.append(twin)
    opts = {"judge": "nl_assertions", "model": "gpt-4o-mini", "cache_dir": tmp_path,
            "completion_kwargs": {"mock_response": NL_REPLY}, **FAST}
    run = run_judge(eps, **opts)
    v = run.verdicts
    assert (run.n_requests, run.n_calls, run.n_cached) == (2, 2, 0)
    assert len(v) == 6 and run.exit_code == 0
    assert v.groupby("episode_id")["verdict"].apply(list).to_dict() == {
        "agentchangebench/ep0": ["met", "not_met"], "agentchangebench/ep1": ["met", "not_met"],
        "agentchangebench/twin": ["met", "not_met"]}
    # litellm's mock usage is 10 prompt + 20 completion tokens; gpt-4o-mini's listed price
    from accordkit.judges._litellm import get_litellm

    info = get_litellm().model_cost["gpt-4o-mini"]
    per_call = 10 * info["input_cost_per_token"] + 20 * info["output_cost_per_token"]
    assert run.cost_usd == pytest.approx(2 * per_call)
    assert v["cost_usd"].sum() == pytest.approx(2 * per_call)       # each call counted once
    assert v["input_tokens"].sum() == 20
    assert (v["cost_usd"] > 0).sum() == 2
    assert len(JudgeCache(tmp_path)) == 2
    again = run_judge(eps, **opts)
    assert (again.n_calls, again.n_cached, again.cost_usd) == (0, 2, 0.0)
    pd.testing.assert_frame_equal(again.verdicts, v)


def test_judge_returns_the_table_with_the_run_summary(tmp_path):
    v = judge([acb_episode()], judge="gsrt", model="gpt-4o-mini", cache_dir=tmp_path,
              completion_kwargs={"mock_response": GSRT_REPLY}, **FAST)
    assert v["verdict"].map(json.loads).tolist() == [json.loads(GSRT_REPLY)]
    assert v.attrs["judge_run"]["exit_code"] == 0 and v.attrs["judge_run"]["n_calls"] == 1


def test_judge_works_inside_a_running_event_loop(tmp_path):
    async def notebook_cell():
        return judge([acb_episode()], judge="gsrt", model="gpt-4o-mini", cache_dir=tmp_path,
                     completion_kwargs={"mock_response": GSRT_REPLY}, **FAST)

    assert len(asyncio.run(notebook_cell())) == 1


def test_extra_litellm_parameters_are_passed_and_keyed(tmp_path):
    opts = {"judge": "gsrt", "model": "gpt-4o-mini", "cache_dir": tmp_path, **FAST}
    a = run_judge([acb_episode()], completion_kwargs={"mock_response": GSRT_REPLY,
                                                      "max_tokens": 400}, **opts)
    b = run_judge([acb_episode()], completion_kwargs={"mock_response": GSRT_REPLY,
                                                      "max_tokens": 500}, **opts)
    assert (a.n_calls, b.n_calls) == (1, 1)          # a different parameter is a new request
    entry = json.loads(JudgeCache(tmp_path).entries()[0].read_text())
    assert entry["params"]["temperature"] == 0 and entry["params"]["max_tokens"] in (400, 500)


def test_stored_output_is_skipped_unless_asked(tmp_path):
    stored = dict(acb_episode("ep1"), nl_verdicts=[])
    opts = {"judge": "nl_assertions", "model": "gpt-4o-mini", "cache_dir": tmp_path,
            "completion_kwargs": {"mock_response": NL_REPLY}, **FAST}
    run = run_judge([acb_episode("ep0"), stored, dict(acb_episode(), benchmark="accord")], **opts)
    assert run.n_skipped == {"benchmark": 1, "stored": 1} and run.n_episodes == 1
    assert run_judge([stored], skip_stored=False, **opts).n_episodes == 1


@pytest.mark.parametrize("kwargs, match", [
    ({"judge": "nope"}, "unknown judge 'nope'"),
    ({"model": ""}, "model must be"),
    ({"concurrency": 0}, "concurrency must be"),
    ({"max_attempts": 0}, "max_attempts must be"),
    ({"timeout": 0}, "timeout must be"),
    ({"max_cost": -1}, "max_cost must be"),
    ({"completion_kwargs": {"api_key": "sk-x"}}, "may not set 'api_key'"),
    ({"completion_kwargs": {"aws_secret_access_key": "x"}}, "may not set"),
    ({"completion_kwargs": {"azure_ad_token": "x"}}, "may not set"),
    ({"completion_kwargs": {"extra_headers": {"Authorization": "Bearer sk-x"}}},
     r"credential \(extra_headers.Authorization\)"),
    ({"completion_kwargs": {"headers": {"api-key": "x"}}}, r"credential \(headers.api-key\)"),
    ({"completion_kwargs": {"extra_headers": {"X-Api-Key": "x"}}}, "credential"),
    ({"completion_kwargs": {"extra_body": {"auth": {"token": "x"}}}},
     r"credential \(extra_body.auth.token\)"),
    ({"completion_kwargs": {"extra_headers": {"X-Custom": "Bearer abc123def456"}}},
     r"credential \(extra_headers.X-Custom\)"),
    # a proxy's own header, and a provider key under any name: stored in clear before
    ({"completion_kwargs": {"extra_headers": {"X-Auth": "sk-proxy-SECRET999"}}},
     r"credential \(extra_headers.X-Auth\)"),
    ({"completion_kwargs": {"extra_headers": {"X-Custom": "sk-proxy-SECRET999"}}},
     r"credential \(extra_headers.X-Custom\)"),
    # any auth-like header name, whatever its value looks like (issue 35, item 4)
    ({"completion_kwargs": {"extra_headers": {"Authentication": "plain-secret"}}},
     r"credential \(extra_headers.Authentication\)"),
    ({"completion_kwargs": {"extra_headers": {"Proxy-Authorization": "Basic abc"}}},
     r"credential \(extra_headers.Proxy-Authorization\)"),
    ({"completion_kwargs": {"extra_headers": {"X-Authentication-Token": "t"}}},
     r"credential \(extra_headers.X-Authentication-Token\)"),
])
def test_bad_options(kwargs, match, tmp_path):
    opts = {"judge": "gsrt", "model": "gpt-4o-mini", "cache_dir": tmp_path, **FAST, **kwargs}
    with pytest.raises(ValueError, match=match):
        run_judge([acb_episode()], **opts)


def test_headers_without_a_credential_are_fine(tmp_path):
    run = run_judge([acb_episode()], judge="gsrt", model="gpt-4o-mini", cache_dir=tmp_path,
                    completion_kwargs={"mock_response": GSRT_REPLY,
                                       "extra_headers": {"X-Title": "accordkit"},
                                       "metadata": {"author": "a", "authority": "b"}},
                    **FAST)
    assert run.exit_code == 0


# --------------------------------------------------------------------------- stub server


def test_faults_end_with_a_verdict_or_an_explicit_error_and_rerun_retries_errors(stub, tmp_path,
                                                                                fake_key):
    plan = {
        "ep0": lambda n: Fault("429", retry_after=0.4) if n == 0 else None,
        "ep1": lambda n: Fault("500") if n < 2 else None,
        "ep2": lambda n: Fault("hang", seconds=2.0) if n == 0 else None,
        "ep3": lambda n: Fault("garbage"),
        "ep4": lambda n: Fault("bad_body") if n == 0 else None,
        "ep5": lambda n: Fault("500"),
        "ep6": lambda n: Fault("401"),
    }
    server = stub(fault=lambda body, n: plan.get(_episode_tag(body), lambda n: None)(n))
    eps = [acb_episode(f"ep{i}") for i in range(9)]
    opts = {"judge": "gsrt", "cache_dir": tmp_path, "timeout": 0.5, "max_attempts": 3,
            "concurrency": 4, **_stub_options(server)}
    run = run_judge(eps, **opts)
    v = run.verdicts.set_index("episode_id")
    tags = [_episode_tag(b) for b in server.requests]
    assert {t: tags.count(t) for t in plan} == {"ep0": 2, "ep1": 3, "ep2": 2, "ep3": 1,
                                               "ep4": 2, "ep5": 3, "ep6": 1}
    assert run.n_attempts == len(server.requests) == 14 + 2
    assert v.loc["agentchangebench/ep3", "verdict"] == "invalid"
    assert "%%garbage%%" in v.loc["agentchangebench/ep3", "raw"]
    for good in ("ep0", "ep1", "ep2", "ep4", "ep7", "ep8"):
        assert json.loads(v.loc[f"agentchangebench/{good}", "verdict"]) == json.loads(GSRT_REPLY)
    assert "after 3 attempt(s)" in v.loc["agentchangebench/ep5", "error"]
    assert "AuthenticationError after 1 attempt(s)" in v.loc["agentchangebench/ep6", "error"]
    assert v["verdict"].isna().sum() == 2 and run.n_errors == 2 and run.exit_code == 2
    # Retry-After honoured: the retry waited >= 0.4 s although the backoff base is 0.01 s
    t0 = [t for t, tag in zip(server.times, tags, strict=True) if tag == "ep0"]
    assert t0[1] - t0[0] >= 0.4
    # the next run asks only for the two errored items; the garbage reply is not re-requested
    plan.clear()
    before = len(server.requests)
    again = run_judge(eps, **opts)
    assert sorted(_episode_tag(b) for b in server.requests[before:]) == ["ep5", "ep6"]
    assert again.exit_code == 0 and again.n_cached == 7
    assert again.verdicts.set_index("episode_id").loc["agentchangebench/ep3", "verdict"] == \
        "invalid"


def test_unknown_price_warns_once_and_costs_are_nan(stub, tmp_path, fake_key):
    server = stub()
    eps = [acb_episode(f"ep{i}") for i in range(3)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_judge(eps, judge="gsrt", model="openai/no-price", api_base=server.base_url,
                        cache_dir=tmp_path, **FAST)
    assert [w.category for w in caught] == [UnknownPriceWarning]
    assert run.verdicts["cost_usd"].isna().all() and math.isnan(run.cost_usd)
    assert (run.verdicts["input_tokens"] > 0).all() and run.exit_code == 0
    assert math.isnan(run.cost_by_model.loc[0, "cost_usd"])


def test_max_cost_needs_a_price_and_refuses_before_any_request(stub, tmp_path, fake_key):
    server = stub()
    with pytest.raises(ValueError, match="max_cost needs a price"):
        run_judge([acb_episode()], judge="gsrt", model="openai/no-price",
                  api_base=server.base_url, cache_dir=tmp_path, max_cost=1.0, **FAST)
    assert server.n_requests == 0


def test_max_cost_stops_dispatching_at_the_cap(stub, tmp_path, fake_key):
    server = stub()
    eps = [acb_episode(f"ep{i}") for i in range(8)]
    # $1000 per million input tokens: one gsrt call of ~600 tokens costs ~$0.6
    run = run_judge(eps, judge="gsrt", model="openai/stub-judge", api_base=server.base_url,
                    cache_dir=tmp_path, price_in=1000.0, price_out=1000.0, max_cost=1.5,
                    concurrency=1, **FAST)
    assert 1 <= run.n_calls <= 2 and run.cost_usd <= 1.5
    errors = run.verdicts["error"].dropna()
    assert len(errors) == 8 - run.n_calls and errors.str.contains("max_cost").all()
    assert run.exit_code == 2 and server.n_requests == run.n_calls


# cancelling mid-request leaves one of litellm's inner coroutines unawaited (harmless)
@pytest.mark.filterwarnings("ignore:coroutine .* was never awaited:RuntimeWarning")
def test_cancelled_run_resumes_without_re_requesting_stored_items(stub, tmp_path, fake_key):
    server = stub(latency=0.1)
    eps = [acb_episode(f"ep{i}") for i in range(16)]
    opts = {"judge": "gsrt", "cache_dir": tmp_path, "concurrency": 2, **_stub_options(server)}
    cache = JudgeCache(tmp_path)

    async def interrupted():
        task = asyncio.create_task(arun_judge(eps, **opts))
        while len(cache) < 5:
            await asyncio.sleep(0.02)
        task.cancel()           # what Ctrl-C does to asyncio.run's main task
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    stored = {json.loads(p.read_text())["messages"][1]["content"]
              for p in JudgeCache(tmp_path).entries()}
    assert 5 <= len(stored) < 16
    first = len(server.requests)
    run = run_judge(eps, **opts)
    asked = server.request_texts()[first:]
    assert not stored & set(asked)
    assert len(asked) == 16 - len(stored) == run.n_calls
    assert run.exit_code == 0 and run.verdicts["verdict"].notna().all()


def test_a_missing_provider_key_is_said_before_sending_and_the_cache_needs_none(
        tmp_path, monkeypatch):
    from accordkit.judges.runner import MissingCredentialsError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    opts = {"judge": "gsrt", "model": "openai/gpt-4o-mini", "cache_dir": tmp_path, **FAST}
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY not set") as exc:
        run_judge([acb_episode()], **opts)
    assert "1 request(s) not sent, 0 answered from the cache" in str(exc.value)
    # answered once (by a stand-in server), the same run is then served from the cache
    from types import SimpleNamespace

    async def server(**_):
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(
            content=GSRT_REPLY))], usage=SimpleNamespace(prompt_tokens=5, completion_tokens=5),
            model="stub")

    run_judge([acb_episode()], _completion=server, **opts)
    again = run_judge([acb_episode()], **opts)
    assert again.n_calls == 0 and again.exit_code == 0


def test_only_a_missing_api_key_stops_a_run_before_sending(monkeypatch):
    from accordkit.judges.runner import _check_credentials

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "OLLAMA_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    # credentials from a profile or a local default server: not refused here
    _check_credentials("bedrock/anthropic.claude-3-haiku", None, n_pending=1, n_cached=0)
    _check_credentials("ollama_chat/llama3", None, n_pending=1, n_cached=0)
