"""``JudgeOptions``: the one home of a judge run's options.

The functions' keyword parameters, the command line's flags and the documentation's table
are held to the fields here, so none of them can drift from the others; the checks say what
they said before the options had a type of their own.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest

from accordkit.judges import JudgeOptions, arun_judge, judge, run_judge
from accordkit.judges.cache import JudgeCache
from accordkit.judges.cli import options_from_args, register
from accordkit.judges.options import DEFAULT_PARAMS
from accordkit.judges.ray_judge import run_judge_on_ray

from .episodes import GSRT_REPLY, acb_episode

REPO = Path(__file__).resolve().parents[2]
FIELDS = dataclasses.fields(JudgeOptions)
NAMES = [f.name for f in FIELDS]
#: Options of Python only: a mapping and a pair have no plain spelling as one flag, and the
#: jitter's seed is for reproducing a run in code. A new option must be put here or get a flag.
PYTHON_ONLY = {"completion_kwargs", "backoff", "seed"}
#: ``accordkit judge`` arguments that are not options of a judge run.
NOT_OPTIONS = {"help", "sources", "errors", "engine", "shards", "output"}
FAST = {"backoff": (0.01, 0.05), "progress": False}


def _default(f: dataclasses.Field) -> object:
    return inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default


def _judge_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="accordkit")
    register(parser.add_subparsers(dest="command"))
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)
                ).choices["judge"]


# --------------------------------------------------------------------------- no drift


@pytest.mark.parametrize("fn", [judge, run_judge, arun_judge, run_judge_on_ray],
                         ids=lambda fn: fn.__name__)
def test_the_keyword_parameters_are_the_fields_in_order_with_their_defaults(fn):
    params = inspect.signature(fn).parameters.values()
    own = {"options", "shards", "max_retries"}
    options = [p for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY
               and p.name not in own and not p.name.startswith("_")]
    assert [p.name for p in options] == NAMES
    assert [p.default for p in options] == [_default(f) for f in FIELDS]
    assert [p.annotation for p in options] == [f.type for f in FIELDS]
    # and each is documented in help(fn) (run_judge and arun_judge point to judge's)
    doc = (judge if fn in (run_judge, arun_judge) else JudgeOptions).__doc__
    for name in NAMES:
        assert re.search(rf"^\s+{name}(, \w+)? : ", doc, re.MULTILINE) \
            or re.search(rf"^\s+\w+, {name} : ", doc, re.MULTILINE), name


def test_every_field_says_whether_it_has_a_flag():
    assert all("flag" in f.metadata for f in FIELDS)
    assert {f.name for f in FIELDS if f.metadata["flag"] is None} == PYTHON_ONLY


def test_the_cli_flags_are_the_fields_with_a_flag_and_share_their_defaults():
    parser = _judge_parser()
    actions = {a.dest: a for a in parser._actions if a.dest not in NOT_OPTIONS}
    assert sorted(actions) == sorted(set(NAMES) - PYTHON_ONLY)
    for f in FIELDS:
        if f.name in actions:
            action = actions[f.name]
            assert tuple(action.option_strings) == f.metadata["flag"].names
            assert action.required == (f.default is dataclasses.MISSING)
            if not action.required:
                assert action.default == f.default, f.name
    args = parser.parse_args(["x.json", "--judge", "gsrt", "--model", "m", "-o", "v.parquet"])
    assert options_from_args(args) == JudgeOptions(judge="gsrt", model="m")
    args = parser.parse_args(["x.json", "--task", "gsrt", "--model", "m", "-o", "v.parquet",
                              "--cache", "c", "--rejudge", "--no-progress", "--shard", "2/3",
                              "--concurrency", "3", "--timeout", "2.5", "--max-attempts", "4",
                              "--max-cost", "1", "--price-in", "0.5", "--price-out", "1.5",
                              "--api-base", "http://127.0.0.1:9/v1"])
    assert options_from_args(args) == JudgeOptions(
        judge="gsrt", model="m", cache_dir="c", skip_stored=False, progress=False,
        shard=(2, 3), concurrency=3, timeout=2.5, max_attempts=4, max_cost=1.0,
        price_in=0.5, price_out=1.5, api_base="http://127.0.0.1:9/v1")


def _docs_table() -> dict[str, list[str]]:
    text = (REPO / "docs" / "judges.md").read_text(encoding="utf-8")
    section = re.split(r"\n##+ ", text.split("\n### Options\n", 1)[1], maxsplit=1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    return {c[0].strip("`"): c[1:] for c in cells}


def test_the_docs_table_lists_every_option_with_its_flag_and_default():
    table = _docs_table()
    assert list(table) == NAMES
    for f in FIELDS:
        flag, default = table[f.name][0], table[f.name][1]
        spelled = f.metadata["flag"]
        assert flag == ("Python only" if spelled is None
                        else " ".join(f"`{n}`" for n in spelled.names)), f.name
        want = "required" if f.default is dataclasses.MISSING else f"`{f.default!r}`"
        assert default == want, f.name


# --------------------------------------------------------------------------- the checks


@pytest.mark.parametrize("kwargs, message", [
    ({"judge": "nope"}, "unknown judge 'nope'; expected one of ['gsrt', 'nl_assertions', "
                        "'outcome', 'review', 'usersim_tests']"),
    ({"model": ""}, "model must be a litellm model name, got ''"),
    ({"concurrency": 0}, "concurrency must be a positive integer, got 0"),
    ({"concurrency": True}, "concurrency must be a positive integer, got True"),
    ({"max_attempts": 0}, "max_attempts must be a positive integer, got 0"),
    ({"timeout": 0}, "timeout must be a positive number of seconds, got 0"),
    ({"max_cost": -1}, "max_cost must be a non-negative number of USD, got -1"),
    ({"max_cost": float("inf")}, "max_cost must be a non-negative number of USD, got inf"),
    ({"shard": "1-2"}, "shard must look like i/n (e.g. 1/4), got '1-2'"),
    ({"shard": (3, 2)}, "shard 3/2: need 1 <= i <= n"),
    ({"price_in": 1.0}, "give both price_in and price_out (USD per million tokens), or neither"),
    ({"price_in": -1.0, "price_out": 1.0},
     "price_in must be a non-negative number (USD per million tokens), got -1.0"),
    ({"completion_kwargs": {"api_key": "x"}},
     "completion_kwargs may not set 'api_key': API keys come only from the environment, and "
     "the runner sets the others itself"),
    ({"completion_kwargs": {"extra_headers": {"Authorization": "Bearer abcdefghij"}}},
     "completion_kwargs may not carry a credential (extra_headers.Authorization): request "
     "parameters are stored with every cached reply; API keys come only from the "
     "environment"),
    # checks the options gained with their type
    ({"completion_kwargs": [("max_tokens", 4)]},
     "completion_kwargs must be a mapping of litellm parameters, got a list"),
    ({"backoff": (5.0, 1.0)}, "backoff must be (base, cap) in seconds, two finite numbers "
                              "with 0 <= base <= cap, got (5.0, 1.0)"),
    ({"seed": 1.5}, "seed must be an integer or None, got 1.5"),
])
def test_a_bad_option_is_refused_with_the_same_words_everywhere(kwargs, message, tmp_path):
    opts = {"judge": "gsrt", "model": "gpt-4o-mini", "cache_dir": tmp_path, **kwargs}
    for make in (lambda: JudgeOptions(**opts),
                 lambda: run_judge([acb_episode()], **opts),
                 lambda: judge([acb_episode()], **opts)):
        with pytest.raises(ValueError) as caught:
            make()
        assert str(caught.value) == message
    assert not any(tmp_path.iterdir())      # nothing was sent, nothing was stored


@pytest.mark.parametrize("flags, message", [
    (["--concurrency", "0"], "concurrency must be a positive integer, got 0"),
    (["--max-cost", "-1"], "max_cost must be a non-negative number of USD, got -1.0"),
    (["--shard", "1-2"], "shard must look like i/n (e.g. 1/4), got '1-2'"),
    (["--price-in", "1"], "give both price_in and price_out (USD per million tokens), or "
                          "neither"),
])
def test_the_command_line_refuses_a_bad_option_before_loading_anything(flags, message,
                                                                        tmp_path, capsys):
    from accordkit.judges.cli import run

    argv = [str(tmp_path / "not-there.json"), "--judge", "gsrt", "--model", "m",
            "--cache", str(tmp_path / "cache"), "-o", str(tmp_path / "v.parquet"), *flags]
    assert run(_judge_parser().parse_args(argv)) == 1
    assert capsys.readouterr().err == f"accordkit judge: error: {message}\n"
    assert not any(tmp_path.iterdir())


def test_the_checks_keep_their_order():
    """Several bad options: the first of the old order is named, as before."""
    with pytest.raises(ValueError, match="^shard must look like"):
        JudgeOptions(judge="nope", model="", concurrency=0, shard="x")
    with pytest.raises(ValueError, match="^unknown judge"):
        JudgeOptions(judge="nope", model="", concurrency=0)
    with pytest.raises(ValueError, match="^concurrency"):
        JudgeOptions(judge="gsrt", model="m", concurrency=0, max_attempts=0, timeout=0)


def test_options_are_frozen_and_keep_their_own_copy_of_the_request_parameters():
    params = {"max_tokens": 400}
    o = JudgeOptions(judge="gsrt", model="m", completion_kwargs=params, backoff=[1, 2])
    params["api_key"] = "sk-added-after-the-check"
    assert o.request_params == {**DEFAULT_PARAMS, "max_tokens": 400}
    assert o.backoff == (1.0, 2.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.concurrency = 2           # type: ignore[misc]
    assert o.replace(concurrency=2).concurrency == 2 and o.concurrency == 8


# --------------------------------------------------------------------------- options=


def test_options_and_keywords_make_the_same_run(tmp_path):
    kw = {"judge": "gsrt", "model": "gpt-4o-mini",
          "completion_kwargs": {"mock_response": GSRT_REPLY}, **FAST}
    a = run_judge([acb_episode()], cache_dir=tmp_path / "a", **kw)
    b = run_judge([acb_episode()], options=JudgeOptions(cache_dir=tmp_path / "b", **kw))
    assert a.verdicts.attrs["judge_job"] == b.verdicts.attrs["judge_job"]
    assert a.verdicts.drop(columns="cached_at").equals(b.verdicts.drop(columns="cached_at"))
    # an equal keyword beside options is fine
    o = JudgeOptions(cache_dir=tmp_path / "b", **kw)
    assert judge([acb_episode()], options=o, judge="gsrt", progress=False)["verdict"].notna().all()


def test_what_is_stored_and_keyed_is_the_request_params_and_nothing_else(tmp_path):
    kw = {"judge": "gsrt", "model": "gpt-4o-mini",
          "completion_kwargs": {"mock_response": GSRT_REPLY, "max_tokens": 300}}
    o = JudgeOptions(cache_dir=tmp_path / "a", progress=False, **kw)
    first = run_judge([acb_episode()], options=o)
    entry = json.loads(JudgeCache(tmp_path / "a").entries()[0].read_text())
    assert entry["params"] == o.request_params
    # the options that change no request change no key: all answered from the cache
    again = run_judge([acb_episode()], options=o.replace(seed=7, concurrency=1, timeout=5,
                                                         max_attempts=2, backoff=(0.0, 0.0)))
    assert again.n_calls == 0 and again.n_cached == first.n_requests
    assert again.verdicts.attrs["judge_job"] == first.verdicts.attrs["judge_job"]
    # a request parameter does
    other = run_judge([acb_episode()], options=o.replace(
        completion_kwargs={**kw["completion_kwargs"], "max_tokens": 301}))
    assert other.n_calls == first.n_calls
    assert other.verdicts.attrs["judge_job"] != first.verdicts.attrs["judge_job"]


@pytest.mark.parametrize("fn", [judge, run_judge], ids=lambda fn: fn.__name__)
def test_a_keyword_that_contradicts_options_is_an_error_naming_it_not_its_value(fn, tmp_path):
    o = JudgeOptions(judge="gsrt", model="gpt-4o-mini", cache_dir=tmp_path)
    with pytest.raises(TypeError) as caught:
        fn([acb_episode()], options=o, cache_dir=tmp_path / "private-folder-XYZ",
           concurrency=2)
    said = str(caught.value)
    assert said.startswith(f"{fn.__name__}() got cache_dir, concurrency both in options and "
                           "as a keyword, with different values")
    assert "XYZ" not in said and "=2" not in said
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("call, message", [
    ({"judge": "gsrt"}, "judge() missing required keyword argument(s): 'model'"),
    ({}, "judge() missing required keyword argument(s): 'judge', 'model'"),
    ({"judge": "gsrt", "model": "m", "concurency": 2},
     "judge() got an unexpected keyword argument 'concurency'"),
    ({"options": {"judge": "gsrt", "model": "m"}},
     "judge() options must be a JudgeOptions, got a dict"),
])
def test_a_call_of_the_wrong_shape_is_a_type_error(call, message):
    with pytest.raises(TypeError) as caught:
        judge([acb_episode()], **call)
    assert str(caught.value) == message


def test_the_ray_engine_takes_the_options_too_and_refuses_a_shard_in_them(tmp_path):
    import ray

    o = JudgeOptions(judge="gsrt", model="openai/stub-judge", cache_dir=tmp_path,
                     shard="1/2")
    with pytest.raises(ValueError, match="shard and the ray engine do not go together"):
        run_judge_on_ray([acb_episode("x")], options=o)
    with pytest.raises(TypeError, match="run_judge_on_ray\\(\\) got concurrency both"):
        run_judge_on_ray([acb_episode("x")], options=o.replace(shard=None), concurrency=1)
    assert not ray.is_initialized()
