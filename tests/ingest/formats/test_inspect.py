"""Inspect logs, written here by inspect_ai's own writer (no network), load as episodes:
samples and epochs -> episodes and trials, scorer values -> reward, tool calls -> transcript."""

from __future__ import annotations

import builtins
from math import comb

import pytest

import accordkit as ak
from accordkit.ingest.formats.inspect import score_value, task_benchmark
from accordkit.schema import EpisodeValidationError

inspect_log = pytest.importorskip(
    "inspect_ai.log", reason="inspect_ai is not installed (pip install 'accordkit[inspect]')")

from inspect_ai.log import (  # noqa: E402
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalSample,
    EvalSpec,
    write_eval_log,
)
from inspect_ai.model import (  # noqa: E402
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.scorer import Score  # noqa: E402
from inspect_ai.tool import ToolCall  # noqa: E402

#: sample id -> the scorer's value in epochs 1, 2, 3
VALUES = {"12": ["C", "C", "C"], "30": ["C", "I", "C"], "41": ["I", "I", "I"]}


def _sample(sid: str, epoch: int, value, *, scorer: str = "airline_scorer") -> EvalSample:
    call = ToolCall(id=f"call-{sid}-{epoch}", function="get_reservation_details",
                    arguments={"reservation_id": "ABC123", "nights": 2})
    return EvalSample(
        id=sid, epoch=epoch, input="I want to change my flight", target="",
        messages=[
            ChatMessageUser(content="I want to change my flight"),
            ChatMessageAssistant(content="Let me look.", tool_calls=[call]),
            ChatMessageTool(content='{"status": "ok"}', tool_call_id=call.id,
                            function=call.function),
            ChatMessageAssistant(content="Done."),
        ],
        scores={scorer: Score(value=value)})


def _log(task: str = "inspect_evals/tau2_airline", samples=None, epochs: int = 3) -> EvalLog:
    """A log as `inspect eval` writes it (its dataset names the sample ids); one built from
    given samples names none (the reader then reads it whole)."""
    ids = None
    if samples is None:
        samples = [_sample(sid, e + 1, v) for sid, vs in VALUES.items()
                   for e, v in enumerate(vs)]
        ids = list(VALUES)
    spec = EvalSpec(created="2026-01-02T03:04:05+00:00", task=task, model="openai/gpt-4o",
                    dataset=EvalDataset(name="tau2", samples=len(VALUES), sample_ids=ids),
                    config=EvalConfig(epochs=epochs), eval_id="EvAlId123")
    return EvalLog(status="success", eval=spec, samples=samples)


@pytest.fixture
def logs(tmp_path):
    folder = tmp_path / "logs"
    folder.mkdir()
    write_eval_log(_log(), str(folder / "run.eval"))
    return folder


def test_epochs_are_trials_and_pass_k_is_the_one_by_hand(logs):
    ds = ak.load(f"{logs}/*.eval")
    assert ds.num_rows == 9
    rows = sorted(ds.to_list(), key=lambda r: (r["task_id"], r["rollout"]))
    assert {(r["benchmark"], r["domain"]) for r in rows} == {("tau2", "airline")}
    assert [r["rollout"] for r in rows] == [0, 1, 2] * 3
    assert {r["num_trials"] for r in rows} == {3}
    assert [r["reward"] for r in rows] == [
        1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    assert rows[0]["agent_model"] == "openai/gpt-4o"
    assert rows[0]["episode_id"] == "inspect/EvAlId123/12/1"
    # pass^k = mean over tasks of C(c,k)/C(3,k), c = the task's successes (3, 2, 0)
    table = ak.pass_hat_k(ak.score(ds))
    for k in (1, 2, 3):
        by_hand = (comb(3, k) + comb(2, k) + comb(0, k)) / comb(3, k) / 3
        got = table.loc[table["k"] == k, "pass_hat_k"].item()
        assert got == pytest.approx(by_hand, abs=1e-15)
    assert table.loc[table["k"] == 1, "pass_hat_k"].item() == pytest.approx(5 / 9)


def test_messages_and_tool_calls_make_the_transcript(logs):
    ds = ak.load(logs)                                       # a folder of logs reads too
    messages = ds[0]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    (call,) = messages[1]["tool_calls"]
    assert call["name"] == "get_reservation_details" and call["requestor"] == "assistant"
    assert call["arguments_json"] == '{"reservation_id": "ABC123", "nights": 2}'
    assert messages[2]["tool_call_id"] == call["id"] and messages[2]["error"] is False
    assert messages[2]["content"] == '{"status": "ok"}'
    assert [m["turn_idx"] for m in messages] == [0, 1, 2, 3]


def test_a_json_log_reads_the_same(tmp_path, logs):
    path = tmp_path / "run.json"
    write_eval_log(_log(), str(path))
    a = ak.load(path).to_list()
    b = ak.load(f"{logs}/*.eval").to_list()
    key = lambda r: r["episode_id"]  # noqa: E731
    strip = lambda rows: [{k: v for k, v in r.items() if k != "source"}  # noqa: E731
                          for r in sorted(rows, key=key)]
    assert strip(a) == strip(b)


def test_score_rule():
    assert [score_value(v) for v in ("C", "I", "P", "N", True, False, 0.75, 1)] == [
        1.0, 0.0, 0.5, 0.0, 1.0, 0.0, 0.75, 1.0]
    for bad in ("maybe", 3, float("nan"), {"a": 1}):
        with pytest.raises(ValueError):
            score_value(bad)
    assert task_benchmark("tau2_telecom") == ("tau2", "telecom")
    assert task_benchmark("inspect_evals/gsm8k") is None


def test_a_bad_sample_is_named_and_the_others_load(tmp_path):
    samples = [_sample("12", 1, "C"), _sample("30", 1, "excellent"), _sample("41", 1, 7.5)]
    path = tmp_path / "bad.eval"
    write_eval_log(_log(samples=samples, epochs=1), str(path))
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(path)
    assert (err.value.source, err.value.record, err.value.field) == (
        str(path), "sample 30 epoch 1", "scores.airline_scorer.value")
    with pytest.warns(ak.SkippedRecordsWarning) as caught:
        ds = ak.load(path, errors="skip")
    assert [r["task_id"] for r in ds] == ["12"]
    text = " ".join(str(w.message) for w in caught)
    assert "sample 41 epoch 1" in text and "0..1" in text


def test_a_task_accordkit_does_not_know_asks_for_metadata(tmp_path):
    path = tmp_path / "other.eval"
    write_eval_log(_log(task="gsm8k"), str(path))
    with pytest.raises(EpisodeValidationError) as err:
        ak.load(path)
    assert err.value.field == "eval.task" and "metadata=" in err.value.reason
    ds = ak.load(path, metadata={"benchmark": "tau2", "domain": "retail"})
    assert {r["domain"] for r in ds} == {"retail"} and ds.num_rows == 9


def test_without_inspect_ai_the_reader_says_to_install_the_extra(logs, monkeypatch):
    real = builtins.__import__

    def no_inspect(name, *args, **kwargs):
        if name.startswith("inspect_ai"):
            raise ImportError(f"No module named {name!r}")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_inspect)
    with pytest.raises(EpisodeValidationError, match=r"accordkit\[inspect\]") as err:
        ak.load(logs / "run.eval", cache=False)
    assert err.value.source.endswith("run.eval")
