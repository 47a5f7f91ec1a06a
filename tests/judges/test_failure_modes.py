"""Regression tests for the red-team findings on the judge runner (issue 11).

Each test rebuilds one reproduction with a fake ``_completion`` (or the stand-in server):
a key reflected into the reply, missing or hostile token usage, empty replies, a read-only
or failing cache, and a killed run's temporary files.
"""

from __future__ import annotations

import json
import math
import os
import stat
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from accordkit.judges import judge, run_judge
from accordkit.judges.cache import STALE_TEMP_SECONDS, CacheNotWritableError, JudgeCache
from accordkit.judges.runner import JudgeCacheWarning

from .episodes import GSRT_REPLY, acb_episode
from .stub_server import Fault

FAST = {"backoff": (0.01, 0.02), "progress": False}
PRICED = {"model": "openai/stub-judge", "price_in": 1000.0, "price_out": 1000.0}


def _response(content: Any = GSRT_REPLY, *, usage: Any = "default", model: str = "stub",
              choices: Any = None, **extra: Any) -> SimpleNamespace:
    if usage == "default":
        usage = SimpleNamespace(prompt_tokens=500, completion_tokens=100)
    if choices is None:
        choices = [SimpleNamespace(message=SimpleNamespace(content=content))]
    return SimpleNamespace(choices=choices, usage=usage, model=model, **extra)


def _fake(make) -> Any:
    calls: list[dict[str, Any]] = []

    async def completion(**kwargs: Any) -> Any:
        calls.append(kwargs)
        return make(len(calls) - 1)

    completion.calls = calls  # type: ignore[attr-defined]
    return completion


def _all_cache_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- 1. key in cache


def test_a_key_echoed_in_every_response_field_never_reaches_the_cache(tmp_path, fake_key):
    echo = f"echo {os.environ['OPENAI_API_KEY']}"
    fake = _fake(lambda n: _response(
        f'{{"start_goal": {{"turn": 1, "goal": "{echo}"}}, "user_goal_shifts": []}}',
        model=echo, id=echo, system_fingerprint=echo,
        _hidden_params={"additional_headers": {"x-echo": echo}},
        _response_headers={"authorization": f"Bearer {fake_key}"}))
    run = run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, _completion=fake,
                    **PRICED, **FAST)
    assert len(fake.calls) == 1 and run.exit_code == 0
    stored = _all_cache_text(tmp_path)
    assert fake_key not in stored and "[REDACTED]" in stored
    entry = json.loads(JudgeCache(tmp_path).entries()[0].read_text())
    assert entry["response_model"] == "echo [REDACTED]"
    assert fake_key not in run.verdicts.to_csv()


def test_a_key_echoed_by_a_real_server_in_model_reply_and_error_is_redacted(stub, tmp_path,
                                                                           fake_key):
    plan = {"a1": Fault("echo_key"), "a2": Fault("401")}
    server = stub(fault=lambda body, n: plan.get(
        body["messages"][-1]["content"].split("lock my card (", 1)[1][:2]))
    run = run_judge([acb_episode("a1"), acb_episode("a2")], judge="gsrt",
                    api_base=server.base_url, cache_dir=tmp_path, max_attempts=1,
                    **PRICED, **FAST)
    assert any(fake_key in str(h) for h in server.headers_seen)   # the key did go out
    assert fake_key not in _all_cache_text(tmp_path)
    assert fake_key not in run.verdicts.to_csv()
    assert "[REDACTED]" in run.verdicts.set_index("episode_id").loc[
        "agentchangebench/a2", "error"]


# --------------------------------------------------------------------------- 2. max_cost


def test_missing_usage_is_counted_locally_and_the_cap_holds(tmp_path):
    fake = _fake(lambda n: _response(usage=None))
    eps = [acb_episode(f"e{i}") for i in range(20)]
    run = run_judge(eps, judge="gsrt", cache_dir=tmp_path, max_cost=2.0, concurrency=1,
                    _completion=fake, **PRICED, **FAST)
    assert 1 <= len(fake.calls) < 20
    assert run.n_estimated == len(fake.calls)
    charged = run.verdicts["cost_usd"].dropna()
    assert (charged[charged > 0] > 0.1).all()           # real estimates, never $0
    assert 0 < run.cost_usd <= 2.0 + charged.max()
    assert run.verdicts["error"].dropna().str.contains("max_cost").all()
    assert (run.verdicts["input_tokens"].dropna() > 0).any()


def test_zero_usage_as_litellm_reports_a_missing_one_is_counted_locally(tmp_path):
    fake = _fake(lambda n: _response(usage=SimpleNamespace(prompt_tokens=0,
                                                          completion_tokens=0)))
    run = run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, _completion=fake,
                    **PRICED, **FAST)
    row = run.verdicts.iloc[0]
    assert row["input_tokens"] > 100 and row["output_tokens"] > 10 and row["cost_usd"] > 0
    assert run.n_estimated == 1


def test_a_capped_run_stops_when_usage_is_missing_and_tokens_cannot_be_counted(tmp_path,
                                                                              monkeypatch):
    import accordkit.judges.dispatch as dispatch

    monkeypatch.setattr(dispatch, "count_tokens", lambda *a, **k: None)
    fake = _fake(lambda n: _response(usage=None))
    run = run_judge([acb_episode(f"e{i}") for i in range(5)], judge="gsrt", cache_dir=tmp_path,
                    max_cost=100.0, concurrency=1, _completion=fake, **PRICED, **FAST)
    assert len(fake.calls) == 1
    errors = run.verdicts["error"].dropna()
    assert len(errors) == 4 and errors.str.contains("cannot be enforced").all()
    assert run.exit_code == 2


@pytest.mark.parametrize("usage", [
    SimpleNamespace(prompt_tokens=-254_000_000, completion_tokens=10),
    SimpleNamespace(prompt_tokens=100, completion_tokens=-1),
    SimpleNamespace(prompt_tokens="lots", completion_tokens=10),
    SimpleNamespace(prompt_tokens=float("nan"), completion_tokens=10),
    SimpleNamespace(prompt_tokens=10.5, completion_tokens=10),
    # beyond any Int64 of the verdict table: it used to be cached, then crash every table
    SimpleNamespace(prompt_tokens=10**19, completion_tokens=10),
])
def test_negative_or_non_numeric_token_counts_are_errors_never_costs(usage, tmp_path):
    fake = _fake(lambda n: _response(usage=usage))
    eps = [acb_episode(f"e{i}") for i in range(6)]
    run = run_judge(eps, judge="gsrt", cache_dir=tmp_path, max_cost=2.0, concurrency=1,
                    _completion=fake, **PRICED, **FAST)
    v = run.verdicts
    assert v["verdict"].isna().all() and run.exit_code == 2
    assert v["cost_usd"].isna().all() and run.cost_usd == 0.0
    assert v["error"].str.contains("UsageError|max_cost").all()
    # each bad answer is charged to the cap at the local estimate, so the cap still holds
    assert len(fake.calls) < 6
    assert len(JudgeCache(tmp_path)) == 0


# --------------------------------------------------------------------------- 16. empty replies


@pytest.mark.parametrize("bad", [
    lambda: _response(choices=[]),
    lambda: _response(content=None),
    lambda: SimpleNamespace(usage=None, model="m"),
])
def test_empty_choices_or_null_content_are_retried_not_cached(bad, tmp_path):
    fake = _fake(lambda n: bad() if n < 2 else _response())
    run = run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, _completion=fake,
                    max_attempts=3, **PRICED, **FAST)
    assert len(fake.calls) == 3 and run.n_attempts == 3
    assert json.loads(run.verdicts.loc[0, "verdict"]) == json.loads(GSRT_REPLY)


def test_an_always_empty_reply_is_an_error_and_asked_again_next_run(tmp_path):
    fake = _fake(lambda n: _response(content=None))
    opts = {"judge": "gsrt", "cache_dir": tmp_path, "max_attempts": 2, **PRICED, **FAST}
    run = run_judge([acb_episode()], _completion=fake, **opts)
    assert run.exit_code == 2 and "EmptyReplyError after 2 attempt(s)" in run.verdicts.loc[
        0, "error"]
    assert len(JudgeCache(tmp_path)) == 0
    good = _fake(lambda n: _response())
    again = run_judge([acb_episode()], _completion=good, **opts)
    assert len(good.calls) == 1 and again.exit_code == 0


def test_blank_replies_are_billed_to_the_cost_and_the_cap(tmp_path):
    # 500 + 100 tokens at $1000 per million each: $0.60 per blank reply
    fake = _fake(lambda n: _response(content=None))
    eps = [acb_episode(f"e{i}") for i in range(20)]
    run = run_judge(eps[:2], judge="gsrt", cache_dir=tmp_path, concurrency=1,
                    _completion=fake, max_attempts=10, **PRICED, **FAST)
    assert len(fake.calls) == 6                   # 3 attempts per item, not 10
    assert run.cost_usd == pytest.approx(6 * 0.6)
    assert run.verdicts["error"].str.contains("EmptyReplyError after 3 attempt").all()
    capped = _fake(lambda n: _response(content=None))
    run = run_judge(eps, judge="gsrt", cache_dir=tmp_path, concurrency=1, max_cost=5.0,
                    _completion=capped, **PRICED, **FAST)
    assert run.cost_usd <= 5.0 + 3 * 0.6          # the cap holds (one request may overrun)
    assert len(capped.calls) < 3 * len(eps)
    assert run.verdicts["error"].str.contains("max_cost").any()


def test_a_killed_runs_temp_files_are_removed_by_the_next_run(tmp_path):
    folder = tmp_path / "gsrt" / "ab"
    folder.mkdir(parents=True)
    old, fresh = folder / ".tmp-killed.json", folder / ".tmp-live.json"
    old.write_text('{"half": ')
    fresh.write_text('{"half": ')
    past = time.time() - STALE_TEMP_SECONDS - 5
    os.utime(old, (past, past))
    run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path,
              _completion=_fake(lambda n: _response()), **PRICED, **FAST)
    assert not old.exists() and fresh.exists()      # a concurrent run's file is left alone


# --------------------------------------------------------------------------- 15. disk


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root ignores folder permissions")
def test_a_read_only_cache_is_refused_before_any_request(tmp_path):
    root = tmp_path / "cache"
    root.mkdir()
    root.chmod(stat.S_IRUSR | stat.S_IXUSR)
    fake = _fake(lambda n: _response())
    try:
        with pytest.raises(CacheNotWritableError, match="not writable.*nothing was sent"):
            run_judge([acb_episode()], judge="gsrt", cache_dir=root, _completion=fake,
                      **PRICED, **FAST)
    finally:
        root.chmod(stat.S_IRWXU)
    assert fake.calls == []


def test_a_cache_path_that_is_a_file_is_refused_before_any_request(tmp_path):
    root = tmp_path / "cache"
    root.write_text("not a folder")
    fake = _fake(lambda n: _response())
    with pytest.raises(CacheNotWritableError, match="nothing was sent"):
        run_judge([acb_episode()], judge="gsrt", cache_dir=root, _completion=fake,
                  **PRICED, **FAST)
    assert fake.calls == []


def test_a_failing_cache_write_keeps_paid_answers_and_warns(tmp_path, monkeypatch):
    def full_disk(self, judge, key, entry):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(JudgeCache, "put", full_disk)
    fake = _fake(lambda n: _response())
    eps = [acb_episode(f"e{i}") for i in range(3)]
    with pytest.warns(JudgeCacheWarning, match="3 judge answer.*No space left"):
        run = run_judge(eps, judge="gsrt", cache_dir=tmp_path, _completion=fake,
                        **PRICED, **FAST)
    assert len(fake.calls) == 3 and run.n_unstored == 3 and run.exit_code == 0
    assert run.verdicts["verdict"].map(json.loads).tolist() == [json.loads(GSRT_REPLY)] * 3
    assert run.cost_usd > 0 and not math.isnan(run.cost_usd)


# --------------------------------------------------------------------------- issue 12: seed


def test_judge_takes_the_seed_its_async_form_has(tmp_path):
    import inspect

    from accordkit.judges import arun_judge

    sync, async_ = inspect.signature(judge), inspect.signature(arun_judge)
    assert sync.parameters["seed"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sync.parameters["seed"].default == async_.parameters["seed"].default
    v = judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, seed=7,
              completion_kwargs={"mock_response": GSRT_REPLY}, model="gpt-4o-mini", **FAST)
    assert v.attrs["judge_run"]["exit_code"] == 0


# --------------------------------------------------------------------------- through litellm


def test_the_reproduction_through_litellm_a_server_without_usage_cannot_bypass_the_cap(
        stub, tmp_path, fake_key):
    server = stub(fault=lambda body, n: Fault("no_usage"))
    eps = [acb_episode(f"e{i}") for i in range(30)]
    run = run_judge(eps, judge="gsrt", api_base=server.base_url, cache_dir=tmp_path,
                    max_cost=10.0, concurrency=1, **PRICED, **FAST)
    assert server.n_requests == run.n_calls < 30
    assert run.n_estimated == run.n_calls
    assert 0 < run.cost_usd <= 10.0 + run.verdicts["cost_usd"].max()
    assert (run.verdicts["cost_usd"].dropna() >= 0).all()


def test_the_reproduction_through_litellm_negative_usage_is_no_cost(stub, tmp_path, fake_key):
    server = stub(fault=lambda body, n: Fault("negative_usage"))
    eps = [acb_episode(f"e{i}") for i in range(30)]
    run = run_judge(eps, judge="gsrt", api_base=server.base_url, cache_dir=tmp_path,
                    max_cost=10.0, concurrency=1, **PRICED, **FAST)
    assert server.n_requests < 30 and run.cost_usd == 0.0
    assert run.verdicts["cost_usd"].isna().all() and run.exit_code == 2
    assert run.verdicts["error"].str.contains("UsageError|max_cost").all()


def test_the_cost_line_says_what_answers_with_invalid_usage_were_estimated_to_cost(
        stub, tmp_path, fake_key, capsys):
    """Negative usage: the line said "cost of this run $0.0000" for answers the provider
    billed (issue 35, item 6); it now adds their local estimate, as charged to the cap."""
    from accordkit.cli import main
    from accordkit.save import save

    server = stub(fault=lambda body, n: Fault("negative_usage"))
    eps = [acb_episode(f"e{i}") for i in range(4)]
    run = run_judge(eps, judge="gsrt", api_base=server.base_url, cache_dir=tmp_path / "api",
                    max_attempts=1, **PRICED, **FAST)
    assert run.cost_usd == 0.0 and run.n_uncounted == 4
    assert run.uncounted_cost_usd > 0 and math.isfinite(run.uncounted_cost_usd)
    import datasets

    source = save(datasets.Dataset.from_list(eps), tmp_path / "eps.jsonl")
    code = main(["judge", str(source), "--judge", "gsrt", "--model", PRICED["model"],
                 "--api-base", server.base_url, "--price-in", "1000", "--price-out", "1000",
                 "--cache", str(tmp_path / "cli"), "-o", str(tmp_path / "v.parquet"),
                 "--no-progress", "--max-attempts", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"cost of this run $0.0000 recorded, plus about ${run.uncounted_cost_usd:.4f} "
            "estimated for 4 answer(s) whose token usage the server reported as invalid") in err


@pytest.mark.parametrize("kind", ["empty_choices", "null_content"])
def test_empty_answers_from_a_server_are_retried_through_litellm(kind, stub, tmp_path,
                                                                 fake_key):
    server = stub(fault=lambda body, n: Fault(kind) if n < 2 else None)
    run = run_judge([acb_episode()], judge="gsrt", api_base=server.base_url, cache_dir=tmp_path,
                    max_attempts=4, **PRICED, **FAST)
    assert server.n_requests == 3 and run.exit_code == 0
    assert json.loads(run.verdicts.loc[0, "verdict"]) == json.loads(GSRT_REPLY)


def test_a_cache_folder_that_refuses_files_is_refused_before_any_request(tmp_path, monkeypatch):
    import errno
    import tempfile

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(tempfile, "mkstemp", read_only)
    fake = _fake(lambda n: _response())
    with pytest.raises(CacheNotWritableError, match="Read-only file system.*nothing was sent"):
        run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, _completion=fake,
                  **PRICED, **FAST)
    assert fake.calls == []


# --------------------------------------------------------------------------- review mends


def test_a_key_echoed_into_a_warning_is_redacted(tmp_path, fake_key):
    """A server echoing the Authorization header into a reply field made pydantic warn
    with the key in clear, on stderr."""
    import warnings

    async def completion(**kwargs: Any) -> Any:
        warnings.warn(f"serializer: input_value='Bearer {fake_key}'", UserWarning,
                      stacklevel=2)
        return _response()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path,
                        _completion=completion, **PRICED, **FAST)
    said = [str(w.message) for w in caught]
    assert run.exit_code == 0 and any("Bearer [REDACTED]" in m for m in said), said
    assert not any(fake_key in m for m in said)


def test_a_parameter_the_cache_cannot_store_is_refused_before_any_request(tmp_path):
    fake = _fake(lambda n: _response())
    with pytest.raises(ValueError, match="'response_format' cannot be stored"):
        run_judge([acb_episode()], judge="gsrt", cache_dir=tmp_path, _completion=fake,
                  completion_kwargs={"response_format": type("Schema", (), {})}, **PRICED,
                  **FAST)
    assert fake.calls == []


def test_a_cached_at_of_another_iso_form_builds_the_table(tmp_path):
    fake = _fake(lambda n: _response())
    run_judge([acb_episode("a"), acb_episode("b")], judge="gsrt", cache_dir=tmp_path,
              _completion=fake, **PRICED, **FAST)
    first = JudgeCache(tmp_path).entries()[0]
    entry = json.loads(first.read_text())
    first.write_text(json.dumps({**entry, "cached_at": "2024-05-01"}))
    run = run_judge([acb_episode("a"), acb_episode("b")], judge="gsrt", cache_dir=tmp_path,
                    _completion=fake, **PRICED, **FAST)
    assert len(fake.calls) == 2 and run.exit_code == 0
    assert run.verdicts["cached_at"].notna().all()
