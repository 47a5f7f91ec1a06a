"""Deterministic stand-in judge models for the sample ``usersim_tests`` verdicts.

The sample AcCoRD episodes come from accordkit's scripted user simulator, whose behaviour is
known: it answers the question it is asked, states values that agree with its instructions,
reveals a fallback only after the agent says the first choice is unavailable, and reveals a
triggered preference as soon as the agent shows the trigger value. The true verdict of each
test on each user turn therefore follows from the episode itself (the ``PREFERENCE_REVEAL``
events and the ``preferences``):

========  =====================================================================
test000   yes on every user turn (the scripted user always answers to the point)
test001   yes on a turn that discloses a preference's own value (an answer to a
          value question), else n/a
test002   n/a (the scripted agent never presents a product that conflicts with a
          revealed preference as the one it will buy)
test003   yes on a turn that discloses an unachievable preference's fallback, else n/a
test004   yes on the same turns (the fallback only ever comes after the agent said the
          first choice is unavailable), else n/a
test005   yes on a turn that discloses a triggered preference, else n/a
========  =====================================================================

Each stand-in model answers the truth except on a seeded share of items (its error rate
for that test), where it gives a wrong label drawn from :data:`WRONG_LABELS` — a judge that
errs on an n/a item usually applies the rule anyway and passes it. The draw for an item is a hash of (seed, model, episode, turn,
test), where "episode, turn" is what the judge is shown — the scenario, the dialogue before
the turn and the turn itself. Like a real judge at temperature 0 behind accordkit's cache,
a stand-in thus gives identical requests (e.g. two rollouts that played out the same way)
identical answers; its verdicts do not depend on episode order and are identical bit for
bit for a given seed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from ..benchmarks import judged_by
from .prompts import content_digest, load_prompt
from .transcript import dialogue_lines
from .usersim import TESTS, scenario_text, user_turns
from .verdicts import VERDICT_COLUMNS, verdict_frame

__all__ = ["STANDIN_MODELS", "WRONG_LABELS", "truth_labels", "standin_answers", "standin_reply",
           "make_sample_verdicts"]

#: Error rate per test for each stand-in model (judge-b is the sloppier one, most on the
#: tests that need reading the whole conversation).
STANDIN_MODELS: dict[str, dict[str, float]] = {
    "standin/judge-a": dict.fromkeys(TESTS, 0.02),
    "standin/judge-b": {**dict.fromkeys(TESTS, 0.05), "test002": 0.12, "test004": 0.15},
}

#: When a stand-in errs: the probability of each wrong label given the true one.
WRONG_LABELS: dict[str, dict[str, float]] = {
    "yes": {"no": 0.7, "n/a": 0.3},
    "no": {"yes": 0.7, "n/a": 0.3},
    "n/a": {"yes": 0.8, "no": 0.2},
}


def _reveals(episode: Mapping[str, Any]) -> dict[int, list[tuple[dict, dict]]]:
    prefs = {p["pref_id"]: p for p in episode.get("preferences") or ()}
    out: dict[int, list[tuple[dict, dict]]] = {}
    for msg in episode.get("messages") or ():
        if msg.get("event") != "PREFERENCE_REVEAL" or msg.get("role") != "user":
            continue
        try:
            event = json.loads(msg.get("event_json") or "")
        except ValueError:
            raise ValueError(f"record {episode.get('episode_id')}, message turn "
                             f"{msg.get('turn_idx')}, field event_json: not valid JSON") from None
        pref = prefs.get(event.get("pref_id"))
        if pref is None:
            raise ValueError(f"record {episode.get('episode_id')}, message turn "
                             f"{msg.get('turn_idx')}, field event_json: unknown pref_id "
                             f"{event.get('pref_id')!r}")
        out.setdefault(int(msg["turn_idx"]), []).append((event, pref))
    return out


def truth_labels(episode: Mapping[str, Any]) -> dict[int, dict[str, str]]:
    """The simulator's true verdict of every test on every user turn (module docstring).

    Examples
    --------
    >>> ep = {"episode_id": "e", "preferences": [{"pref_id": "p0", "value": "red",
    ...        "dynamic": "hard_underspec", "backoff": None, "trigger": None}],
    ...       "messages": [{"role": "user", "kind": "utterance", "turn_idx": 1,
    ...                     "content": "Red.", "event": "PREFERENCE_REVEAL",
    ...                     "event_json": '{"pref_id": "p0", "value": "red"}'}]}
    >>> truth_labels(ep)[1]["test001"]
    'yes'
    """
    reveals = _reveals(episode)
    out = {}
    for turn, _ in user_turns(list(episode.get("messages") or ())):
        labels = {"test000": "yes", "test001": "n/a", "test002": "n/a", "test003": "n/a",
                  "test004": "n/a", "test005": "n/a"}
        for event, pref in reveals.get(turn, ()):
            value = event.get("value")
            if pref.get("dynamic") == "unachievable" and pref.get("backoff") is not None \
                    and value == pref.get("backoff"):
                labels["test003"] = labels["test004"] = "yes"
            elif pref.get("dynamic") == "triggered":
                labels["test005"] = "yes"
            elif value == pref.get("value"):
                labels["test001"] = "yes"
        out[turn] = labels
    return out


def _unit(*parts: Any) -> float:
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def standin_answers(episode: Mapping[str, Any], model: str, *, seed: int = 0
                    ) -> dict[int, dict[str, str]]:
    """What stand-in ``model`` answers for every user turn of ``episode``."""
    try:
        rates = STANDIN_MODELS[model]
    except KeyError:
        raise ValueError(f"unknown stand-in model {model!r}; expected one of "
                         f"{sorted(STANDIN_MODELS)}") from None
    messages = list(episode.get("messages") or ())
    scenario = scenario_text(episode)
    replies = dict(user_turns(messages))
    out = {}
    for turn, labels in truth_labels(episode).items():
        shown = content_digest(episode.get("domain") or "", scenario,
                           dialogue_lines(messages, before=turn), replies[turn])
        answers = {}
        for test, truth in labels.items():
            key = (seed, model, shown, test)
            answers[test] = truth
            if _unit(*key, "err") < rates[test]:
                u, acc = _unit(*key, "pick"), 0.0
                for label, p in WRONG_LABELS[truth].items():
                    acc += p
                    answers[test] = label
                    if u < acc:
                        break
        out[turn] = answers
    return out


def standin_reply(answers: Mapping[str, str]) -> str:
    """The reply text a stand-in gives for one turn (the judge's JSON format)."""
    return json.dumps({t: answers[t] for t in TESTS})


def make_sample_verdicts(ds: Any, *, seed: int = 0,
                         models: Iterable[str] = tuple(STANDIN_MODELS)) -> pd.DataFrame:
    """``usersim_tests`` verdicts of the stand-in models on AcCoRD episodes.

    Parameters
    ----------
    ds : datasets.Dataset or iterable of episode dicts
        Episodes; only AcCoRD ones are judged.
    seed : int
        Seed of the stand-ins' errors.
    models : iterable of str
        Stand-in model names (keys of :data:`STANDIN_MODELS`).

    Returns
    -------
    DataFrame
        A verdict table (one row per model, episode, user turn and test). Cost 0, token
        counts and ``cached_at`` null: nothing was called.

    Examples
    --------
    >>> from accordkit.synth.accord import generate_accord            # doctest: +SKIP
    >>> v = make_sample_verdicts(generate_accord(seed=0)[0])           # doctest: +SKIP
    >>> sorted(v["judge_model"].unique())                              # doctest: +SKIP
    ['standin/judge-a', 'standin/judge-b']
    """
    episodes = ds.to_list() if hasattr(ds, "to_list") else list(ds)
    judged = judged_by("usersim_tests")
    cols: dict[str, list[Any]] = {c: [] for c in VERDICT_COLUMNS}
    for model in models:
        for ep in episodes:
            if ep.get("benchmark") not in judged:
                continue
            tpl = load_prompt(f"usersim_tests.{ep['domain']}")
            for turn, answers in standin_answers(ep, model, seed=seed).items():
                raw = standin_reply(answers)
                for test in TESTS:
                    for col, value in (("episode_id", ep["episode_id"]),
                                       ("judge", "usersim_tests"), ("judge_model", model),
                                       ("prompt_id", tpl.id), ("prompt_version", tpl.version),
                                       ("item", test), ("turn_idx", turn),
                                       ("verdict", answers[test]), ("raw", raw),
                                       ("error", None), ("input_tokens", None),
                                       ("output_tokens", None), ("cost_usd", 0.0),
                                       ("cached_at", None)):
                        cols[col].append(value)
    return verdict_frame(cols)
