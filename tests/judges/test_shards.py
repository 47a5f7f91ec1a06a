"""Judge shards: n runs split one job by request hash; merging gives the single run."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pandas as pd
import pytest

from accordkit.cli import main
from accordkit.judges import MergeConflictError, merge_caches, merge_verdicts, run_judge
from accordkit.judges.cache import JudgeCache
from accordkit.judges.runner import check_shard
from accordkit.judges.verdicts import write_verdicts

from .episodes import acb_episode

REPLY = json.dumps({"results": [{"index": 0, "met": True, "justification": "a"},
                                {"index": 1, "met": False, "justification": "b"}]})
OPTS = {"judge": "nl_assertions", "model": "openai/shard-test", "price_in": 1.0,
        "price_out": 2.0, "progress": False, "backoff": (0.001, 0.002)}


async def _completion(**kw):
    return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=REPLY))],
                           usage=SimpleNamespace(prompt_tokens=100, completion_tokens=20),
                           model="shard-test")


def _eps(n=40):
    return [acb_episode(f"ep{i}") for i in range(n)]


def _stable(v: pd.DataFrame) -> pd.DataFrame:
    keys = ["episode_id", "item", "turn_idx"]
    return v.drop(columns=["cached_at"]).sort_values(keys).reset_index(drop=True)


def test_shards_split_the_requests_and_merge_to_the_single_run(tmp_path):
    single = run_judge(_eps(), cache_dir=tmp_path / "one", _completion=_completion, **OPTS)
    parts = [run_judge(_eps(), cache_dir=tmp_path / f"s{i}", shard=(i, 3),
                       _completion=_completion, **OPTS) for i in (1, 2, 3)]
    calls = [p.n_calls for p in parts]
    assert sum(calls) == single.n_calls == 40 and all(c > 0 for c in calls)
    merged = merge_verdicts([p.verdicts for p in parts])
    pd.testing.assert_frame_equal(_stable(merged), _stable(single.verdicts))
    counts = merge_caches([tmp_path / f"s{i}" for i in (1, 2, 3)], tmp_path / "all")
    assert counts == {"copied": 40, "present": 0}
    assert sorted(p.name for p in JudgeCache(tmp_path / "all").entries()) == \
        sorted(p.name for p in JudgeCache(tmp_path / "one").entries())
    # a merged cache answers a whole re-run without a single call
    again = run_judge(_eps(), cache_dir=tmp_path / "all", _completion=_completion, **OPTS)
    assert again.n_calls == 0 and again.n_cached == 40


def test_a_conflicting_merge_is_refused(tmp_path):
    a = run_judge(_eps(3), cache_dir=tmp_path / "a", _completion=_completion, **OPTS).verdicts
    b = a.copy()
    b.loc[0, "verdict"] = "not_met" if b.loc[0, "verdict"] == "met" else "met"
    with pytest.raises(MergeConflictError, match="1 conflicting verdict"):
        merge_verdicts([a, b])
    # an error row is not a conflict: the answer wins
    c = a.copy()
    c["verdict"], c["error"] = None, "RateLimitError after 10 attempt(s)"
    assert merge_verdicts([c, a])["error"].isna().all()


def test_a_conflict_on_an_item_with_no_turn_names_both_verdicts(tmp_path):
    """GSRT rows have no turn: the message used to end after the colon."""
    from .episodes import GSRT_REPLY

    gsrt = {**OPTS, "judge": "gsrt"}
    a = run_judge([acb_episode("x")], cache_dir=tmp_path, **gsrt,
                  completion_kwargs={"mock_response": GSRT_REPLY}).verdicts
    assert a["turn_idx"].isna().all()
    b = a.copy()
    b["verdict"] = "invalid"
    with pytest.raises(MergeConflictError) as err:
        merge_verdicts([a, b])
    message = str(err.value)
    assert "turn none" in message and "invalid vs " in message, message


def test_conflicting_caches_are_refused_and_nothing_copied(tmp_path):
    run_judge(_eps(2), cache_dir=tmp_path / "a", _completion=_completion, **OPTS)
    run_judge(_eps(2), cache_dir=tmp_path / "b", _completion=_completion, **OPTS)
    entry = JudgeCache(tmp_path / "b").entries()[0]
    data = json.loads(entry.read_text())
    data["raw"] = "something else"
    entry.write_text(json.dumps(data))
    with pytest.raises(MergeConflictError, match="different replies"):
        merge_caches([tmp_path / "a", tmp_path / "b"], tmp_path / "into")
    assert not (tmp_path / "into").exists() or not JudgeCache(tmp_path / "into").entries()


def test_a_corrupt_entry_in_the_target_is_replaced(tmp_path):
    run_judge(_eps(2), cache_dir=tmp_path / "a", _completion=_completion, **OPTS)
    assert merge_caches([tmp_path / "a"], tmp_path / "into") == {"copied": 2, "present": 0}
    broken = JudgeCache(tmp_path / "into").entries()[0]
    broken.write_text(broken.read_text()[:20])              # truncated
    assert merge_caches([tmp_path / "a"], tmp_path / "into") == {"copied": 1, "present": 1}
    again = run_judge(_eps(2), cache_dir=tmp_path / "into", _completion=_completion, **OPTS)
    assert again.n_calls == 0


def test_merge_from_the_command_line(tmp_path, capsys):
    paths = []
    for i in (1, 2):
        v = run_judge(_eps(10), cache_dir=tmp_path / f"c{i}", shard=f"{i}/2",
                      _completion=_completion, **OPTS).verdicts
        paths.append(str(write_verdicts(v, tmp_path / f"part{i}.parquet")))
    out = tmp_path / "merged.parquet"
    assert main(["judge", "merge", *paths, "-o", str(out), "--caches",
                 str(tmp_path / "c1"), str(tmp_path / "c2"), "--into", str(tmp_path / "c")]) == 0
    assert len(pd.read_parquet(out)) == 20
    assert "merged 2 file(s): 20 items" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["0/2", "3/2", "a/b", "1"])
def test_bad_shard_specs_are_refused(bad):
    with pytest.raises(ValueError, match="shard"):
        check_shard(bad)


# --- a merge that is not the whole job is refused (issue 35, item 6) --------------------

def _shard_files(tmp_path, n, *, model=OPTS["model"], eps=12, which=None):
    paths = []
    for i in (which or range(1, n + 1)):
        v = run_judge(_eps(eps), cache_dir=tmp_path / f"c{model[-1]}{n}{i}", shard=(i, n),
                      _completion=_completion, **{**OPTS, "model": model}).verdicts
        paths.append(str(write_verdicts(v, tmp_path / f"{model[-1]}{n}-{i}.parquet")))
    return paths


def test_a_missing_shard_is_refused_with_how_much_is_there(tmp_path, capsys):
    paths = _shard_files(tmp_path, 3)
    out = tmp_path / "merged.parquet"
    assert main(["judge", "merge", *paths[:2], "-o", str(out)]) == 1
    err = capsys.readouterr().err
    missing = run_judge(_eps(12), cache_dir=tmp_path / "c", shard=(3, 3),
                        _completion=_completion, **OPTS).n_requests
    assert f"shard(s) 3/3 of the job are missing: the files hold {12 - missing} of its 12 " \
           "requests" in err and "--allow-partial" in err
    assert not out.exists()
    assert main(["judge", "merge", *paths[:2], "-o", str(out), "--allow-partial"]) == 0
    assert 0 < len(pd.read_parquet(out)) < 24
    assert main(["judge", "merge", *paths, "-o", str(out)]) == 0
    assert len(pd.read_parquet(out)) == 24


def test_shards_of_different_splits_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"shards of different splits of the job \(1/2, 2/3"):
        merge_verdicts([*_shard_files(tmp_path, 2, which=[1]),
                        *_shard_files(tmp_path, 3, which=[2, 3])])


def test_files_of_another_model_or_other_episodes_are_refused(tmp_path):
    from accordkit.judges import IncompleteMergeError

    other_model = _shard_files(tmp_path, 2, model="openai/shard-test-b", which=[2])
    with pytest.raises(IncompleteMergeError, match="2 different judge jobs: nl_assertions · "
                       "openai/shard-test"):
        merge_verdicts([*_shard_files(tmp_path, 2, which=[1]), *other_model])
    fewer = _shard_files(tmp_path / "few", 2, eps=6, which=[2])
    with pytest.raises(IncompleteMergeError, match="different judge jobs"):
        merge_verdicts([*_shard_files(tmp_path, 2, which=[1]), *fewer])
    assert len(merge_verdicts([*_shard_files(tmp_path, 2, which=[1]), *other_model],
                              allow_partial=True)) > 0


def test_a_file_that_names_no_job_is_refused_unless_partial_is_allowed(tmp_path):
    whole = run_judge(_eps(4), cache_dir=tmp_path / "w", _completion=_completion,
                      **OPTS).verdicts
    by_hand = whole.copy()
    by_hand.attrs = {}
    with pytest.raises(ValueError, match="table 1 does not say which judge job"):
        merge_verdicts([by_hand])
    assert len(merge_verdicts([by_hand], allow_partial=True)) == len(whole)
    # a whole run merged with its re-run is complete: it holds every request
    merged = merge_verdicts([whole, whole.copy()])
    assert merged.attrs["judge_job"]["requests"] == 4 and merged.attrs["judge_job"]["shard"] \
        is None


def test_the_job_survives_writing_and_reading(tmp_path):
    from accordkit.judges.verdicts import read_verdicts

    v = run_judge(_eps(4), cache_dir=tmp_path / "w", shard=(2, 2), _completion=_completion,
                  **OPTS).verdicts
    back = read_verdicts(write_verdicts(v, tmp_path / "v.parquet"))
    assert back.attrs["judge_job"] == v.attrs["judge_job"]
    assert back.attrs["judge_job"]["shard"] == [2, 2]
