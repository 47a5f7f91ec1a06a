"""Deterministic scripted AcCoRD simulator: the embedded ``data/sample/accord`` episodes.

A rule-based user and scripted agents of different quality play out shopping (``shop``) and
travel-booking (``travel``) scenarios against a small invented catalogue per scenario. Every
preference carries one of the AcCoRD dynamics (``docs/schema.md``):

* ``stated`` - said in the opening request;
* ``hard_underspec`` - withheld until the agent asks about it;
* ``soft_underspec`` - a mild preference, shared only when asked or shown the choices;
* ``unachievable`` - the primary value is absent from the catalogue; the user names the
  ``backoff`` only after the agent says the primary is unavailable;
* ``triggered`` - not formed yet; the user asks for the ``trigger`` value only once the agent
  mentions it.

The agents are fixed policies, one per (agent model, method): the basic model never asks
under ReAct and asks generic questions under UncReAct; the careful model asks about each
feature, reports unavailability and shows the choices (more reliably under UncReAct).
Everything random comes from :class:`numpy.random.Generator` objects seeded from
:class:`numpy.random.SeedSequence` keys, so the same ``seed`` gives bit-identical records.

Satisfaction is checked exactly against the purchased item or booked options (no judge), so
every completed episode has every preference judged; incomplete episodes have none judged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from ..schema import DYNAMICS, empty_episode, validate_episode

__all__ = [
    "generate_accord",
    "AGENT_MODELS",
    "METHODS",
    "N_ROLLOUTS",
    "USER_MODEL",
    "SOURCE",
    "POLICIES",
    "AgentPolicy",
]

DOMAINS = ("shop", "travel")
AGENT_MODELS = ("sim-basic-1", "sim-careful-1")
METHODS = ("react", "uncreact")
N_ROLLOUTS = 3
USER_MODEL = "sim-user-rules-1"
USER_IMPLEMENTATION = "accord_user_simulator"
SOURCE = "accordkit.synth/accord"
MAX_STEPS = {"shop": 30, "travel": 48}  # agent messages (actions + utterances) per episode

# ---------------------------------------------------------------------------------------
# Agent policies
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AgentPolicy:
    """How a scripted agent behaves; probabilities are drawn per decision from the rollout RNG.

    Attributes
    ----------
    ask : {"never", "generic", "specific"}
        ``generic`` asks "anything else?" (the user then names one withheld requirement at a
        time); ``specific`` asks about one feature at a time.
    p_ask_field : float
        ``specific``: chance of asking about each feature whose value is unknown.
    max_generic : int
        ``generic``: most open questions asked per product or travel domain.
    p_report_unavailable : float
        Chance of telling the user that a requested value is unavailable (instead of silently
        dropping it or retrying).
    p_loop_on_empty : float
        Chance, when not reporting, of repeating the failing search until the step limit.
    p_show_choices : float
        Chance of showing the user the available choices before committing.
    p_wander : float
        Chance of aimless extra searches and clicks (may exhaust the step limit).
    p_respect_budget : float
        Shop: chance of filtering the results by the user's budget.
    p_forget_domain : float
        Travel: chance, per travel domain, of never booking it (episode incomplete).
    p_bad_id : float
        Travel: chance of a booking call with an option id from the wrong domain (tool error).
    n_compare : int
        Shop: product pages opened before choosing.
    """

    ask: str
    p_ask_field: float
    max_generic: int
    p_report_unavailable: float
    p_loop_on_empty: float
    p_show_choices: float
    p_wander: float
    p_respect_budget: float
    p_forget_domain: float
    p_bad_id: float
    n_compare: int


POLICIES: dict[tuple[str, str], AgentPolicy] = {
    ("sim-basic-1", "react"): AgentPolicy(
        ask="never", p_ask_field=0.0, max_generic=0, p_report_unavailable=0.0,
        p_loop_on_empty=0.45, p_show_choices=0.0, p_wander=0.10, p_respect_budget=0.75,
        p_forget_domain=0.06, p_bad_id=0.10, n_compare=1),
    ("sim-basic-1", "uncreact"): AgentPolicy(
        ask="generic", p_ask_field=0.0, max_generic=3, p_report_unavailable=0.25,
        p_loop_on_empty=0.35, p_show_choices=0.15, p_wander=0.15, p_respect_budget=0.85,
        p_forget_domain=0.05, p_bad_id=0.10, n_compare=1),
    ("sim-careful-1", "react"): AgentPolicy(
        ask="specific", p_ask_field=0.55, max_generic=0, p_report_unavailable=0.6,
        p_loop_on_empty=0.15, p_show_choices=0.45, p_wander=0.05, p_respect_budget=0.95,
        p_forget_domain=0.02, p_bad_id=0.05, n_compare=2),
    ("sim-careful-1", "uncreact"): AgentPolicy(
        ask="specific", p_ask_field=0.95, max_generic=0, p_report_unavailable=0.92,
        p_loop_on_empty=0.05, p_show_choices=0.9, p_wander=0.08, p_respect_budget=1.0,
        p_forget_domain=0.01, p_bad_id=0.05, n_compare=3),
}

# ---------------------------------------------------------------------------------------
# Vocabulary (invented)
# ---------------------------------------------------------------------------------------

def _vocabulary() -> dict[str, Any]:
    """The invented vocabulary, package data in ``accordkit/synth/vocab/accord.json``."""
    text = resources.files(__package__).joinpath("vocab", "accord.json").read_text("utf-8")
    vocab = json.loads(text)
    for spec in (*vocab["shop_types"], *vocab["travel_domains"].values()):
        spec["price"] = tuple(spec["price"])
    return vocab


_VOCAB = _vocabulary()
_SHOP_TYPES: tuple[dict[str, Any], ...] = tuple(_VOCAB["shop_types"])
_BRANDS: tuple[str, ...] = tuple(_VOCAB["brands"])
_SHOP_OCCASIONS: tuple[str, ...] = tuple(_VOCAB["shop_occasions"])
_TRAVEL_DOMAINS: dict[str, dict[str, Any]] = _VOCAB["travel_domains"]
_TRAVEL_FAMILIES: tuple[tuple[str, tuple[str, ...], str], ...] = tuple(
    (f["name"], tuple(f["pool"]), f["opener"]) for f in _VOCAB["travel_families"])
_CITIES: tuple[str, ...] = tuple(_VOCAB["cities"])
#: Preference dynamics and the chance of drawing each, per domain (roughly the paper's
#: Table 2 mix, plus some ``stated`` preferences that the paper does not count apart).
_DYNAMIC_WEIGHTS: dict[str, dict[str, float]] = _VOCAB["dynamic_weights"]
#: Dynamics forced in turn onto scenarios: every one but ``stated``.
_FORCED = tuple(d for d in DYNAMICS if d != "stated")

# ---------------------------------------------------------------------------------------
# Scenario model
# ---------------------------------------------------------------------------------------


@dataclass
class _Pref:
    pref_id: str
    unit: str            # shop: the product type; travel: the travel domain
    field: str
    name: str
    slot: str
    value: str
    dynamic: str
    backoff: str | None = None
    trigger: str | None = None
    up_front: bool = False  # said in the opening request (stated; some unachievable primaries)

    @property
    def target(self) -> str:
        if self.dynamic == "unachievable":
            return str(self.backoff)
        if self.dynamic == "triggered":
            return str(self.trigger)
        return self.value


@dataclass
class _Item:
    item_id: str
    unit: str
    kind: str                      # product type (shop) or travel domain
    name: str
    price: float
    fields: dict[str, list[str]]   # attribute -> [value]; option -> [default, others...]


@dataclass
class _Unit:
    name: str
    fields: dict[str, list[str]]
    options: tuple[str, ...]
    items: list[_Item]


@dataclass
class _Scenario:
    domain: str
    task_id: str
    category: str
    narrative: str
    units: list[_Unit]
    prefs: list[_Pref]
    budget: float | None = None
    product_type: str | None = None
    destination: str | None = None


def _pick(rng: np.random.Generator, seq: list | tuple) -> Any:
    return seq[int(rng.integers(len(seq)))]


def _shuffled(rng: np.random.Generator, seq: list | tuple) -> list:
    return [seq[i] for i in rng.permutation(len(seq))]


def _draw_dynamics(rng: np.random.Generator, domain: str, fields: list[tuple[str, str, bool]],
                   forced: str) -> list[str]:
    """One dynamic per (unit, field, is_option); ``forced`` appears at least once."""
    weights = _DYNAMIC_WEIGHTS[domain]
    names = list(weights)
    probs = np.array([weights[n] for n in names])
    out = [names[int(rng.choice(len(names), p=probs))] for _ in fields]
    if domain == "shop":  # shop triggers are option values (seen when the choices are shown)
        out = [d if d != "triggered" or f[2] else "hard_underspec"
               for d, f in zip(out, fields, strict=True)]
    if forced not in out:
        ok = [i for i, f in enumerate(fields) if forced != "triggered" or domain != "shop" or f[2]]
        out[int(ok[int(rng.integers(len(ok)))])] = forced
    if domain == "shop":  # at most one unachievable and one triggered preference per product
        for dyn in ("unachievable", "triggered"):
            seen = False
            for i, d in enumerate(out):
                if d == dyn:
                    out[i] = "hard_underspec" if seen else d
                    seen = True
    return out


def _make_prefs(rng: np.random.Generator, domain: str, chosen: list[tuple[str, str, bool]],
                vocab: dict[tuple[str, str], list[str]], forced: str) -> list[_Pref]:
    dynamics = _draw_dynamics(rng, domain, chosen, forced)
    prefs = []
    for k, ((unit, fld, is_opt), dyn) in enumerate(zip(chosen, dynamics, strict=True)):
        values = _shuffled(rng, vocab[(unit, fld)])
        if domain == "shop":
            name, slot = fld, f"option:{fld}" if is_opt else "attribute"
        else:
            name = slot = f"{unit}.{fld}"
        pref = _Pref(pref_id=f"p{k}", unit=unit, field=fld, name=name, slot=slot,
                     value=values[0], dynamic=dyn)
        if dyn == "unachievable":
            pref.backoff = values[1]
            pref.up_front = bool(rng.random() < 0.5)
        elif dyn == "triggered":
            pref.trigger = pref.value
        elif dyn == "stated":
            pref.up_front = True
        prefs.append(pref)
    return prefs


def _make_items(rng: np.random.Generator, *, unit: str, kind: str,
                vocab: dict[str, list[str]], options: tuple[str, ...],
                prefs: list[_Pref], n: int, ids: list[str], names: list[str],
                price: tuple[float, float]) -> list[_Item]:
    """A catalogue for one unit: a target item satisfying every target, near misses, others.

    Primary values of unachievable preferences appear in no item; option triggers are never
    the default choice of the target.
    """
    banned = {p.field: p.value for p in prefs if p.dynamic == "unachievable"}
    targets = {p.field: p.target for p in prefs}
    triggered = {p.field for p in prefs if p.dynamic == "triggered"}

    def allowed(fld: str) -> list[str]:
        return [v for v in vocab[fld] if banned.get(fld) != v]

    def option_list(fld: str, must: str | None, default_not: str | None) -> list[str]:
        pool = allowed(fld)
        k = int(rng.integers(2, min(4, len(pool)) + 1))
        vals = _shuffled(rng, pool)[:k]
        if must is not None and must not in vals:
            vals[-1] = must
        if default_not is not None and vals[0] == default_not:
            vals = vals[1:] + vals[:1]
        return vals

    def fields_for(target_like: dict[str, str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for fld in vocab:
            want = target_like.get(fld)
            if fld in options:
                out[fld] = option_list(fld, want, want if fld in triggered else None)
            else:
                out[fld] = [want if want is not None else _pick(rng, allowed(fld))]
        return out

    lo, hi = price
    def has_other(fld: str) -> bool:
        return any(v != targets[fld] for v in allowed(fld))

    items = [_Item(ids[0], unit, kind, names[0], 0.0, fields_for(targets))]

    movable = ([p.field for p in prefs if not p.up_front and has_other(p.field)]
               or [p.field for p in prefs if has_other(p.field)])
    for j in range(1, n):
        if j <= (2 * n) // 3 and movable:
            near = dict(targets)  # a near miss: one or two hidden targets changed
            moved = _shuffled(rng, movable)[: int(rng.integers(1, 3))]
            # Trigger and backoff values are rarer than the rest: most near misses lack them.
            moved += [p.field for p in prefs if p.dynamic in ("triggered", "unachievable")
                      and p.field not in moved and has_other(p.field) and rng.random() < 0.7]
            for fld in moved:
                others = [v for v in allowed(fld) if v != targets[fld]]
                near[fld] = _pick(rng, others)
            flds = fields_for(near)
            for fld in options:  # a changed option must not offer the target value either
                if fld in targets and near.get(fld) != targets[fld]:
                    flds[fld] = [v for v in flds[fld] if v != targets[fld]]
        else:
            flds = fields_for({})
        items.append(_Item(ids[j], unit, kind, names[j], 0.0, flds))
    for it in items:
        it.price = round(float(rng.uniform(lo, hi)), 2)
    return items


def _shop_scenario(rng: np.random.Generator, index: int, counters: dict[str, int]) -> _Scenario:
    spec = _SHOP_TYPES[index % len(_SHOP_TYPES)]
    category, ptype = spec["category"], spec["type"]
    task_id = f"{category}{counters.get(category, 0):03d}"
    counters[category] = counters.get(category, 0) + 1
    vocab = {**spec["attributes"], **spec["options"]}
    options = tuple(spec["options"])
    all_fields = [(ptype, f, f in options) for f in vocab]
    k = min(len(all_fields), int(rng.integers(3, 6)))
    chosen = _shuffled(rng, all_fields)[:k]
    forced = _FORCED[index % len(_FORCED)]
    if forced == "triggered" and not any(c[2] for c in chosen):  # shop triggers are options
        chosen[-1] = (ptype, options[0], True)
    prefs = _make_prefs(rng, "shop", chosen, {(ptype, f): v for f, v in vocab.items()}, forced)
    n_items, n_near = 10, 3
    codes = rng.choice(np.arange(1000, 10000), size=n_items + n_near, replace=False)
    ids = [f"P{int(c)}" for c in codes]
    brands = _shuffled(rng, _BRANDS)
    items = _make_items(rng, unit=ptype, kind=ptype, vocab=vocab, options=options, prefs=prefs,
                        n=n_items, ids=ids[:n_items],
                        names=[f"{b} {ptype}" for b in brands[:n_items]], price=spec["price"])
    # Look-alikes of another product type that match the targets (a tempting wrong purchase).
    near = spec["near"]
    lookalikes = _make_items(rng, unit=ptype, kind=near, vocab=vocab, options=options,
                             prefs=[p for p in prefs if p.dynamic != "unachievable"],
                             n=n_near, ids=ids[n_items:],
                             names=[f"{b} {near}" for b in brands[n_items:n_items + n_near]],
                             price=spec["price"])
    for p in prefs:  # one look-alike offers the unavailable primary value
        if p.dynamic == "unachievable":
            look = lookalikes[0]
            look.fields[p.field] = ([p.value] if p.field not in options
                                    else [p.value] + look.fields[p.field][1:])
    target = items[0]
    budget = float(np.ceil(target.price * float(rng.uniform(1.05, 1.4))))
    catalogue = [items[0]] + _shuffled(rng, items[1:] + lookalikes)
    pos = int(rng.integers(0, 8))  # the target is not always listed first
    catalogue.insert(pos, catalogue.pop(0))
    occasion = _pick(rng, _SHOP_OCCASIONS)
    said = [p for p in prefs if p.up_front]
    wants = ", ".join(f"{p.value}" if p.slot == "attribute" else f"{p.name} {p.value}"
                      for p in said)
    narrative = (f"You need a {ptype}. {occasion}. You can spend at most ${budget:.0f}."
                 + (f" You already know you want: {wants}." if wants else ""))
    unit = _Unit(ptype, vocab, options, catalogue)
    return _Scenario("shop", task_id, category, narrative, [unit], prefs, budget=budget,
                     product_type=ptype)


def _travel_scenario(rng: np.random.Generator, index: int,
                     counters: dict[str, int]) -> _Scenario:
    family, pool, opener = _TRAVEL_FAMILIES[index % len(_TRAVEL_FAMILIES)]
    task_id = f"{family}{counters.get(family, 0):03d}"
    counters[family] = counters.get(family, 0) + 1
    n_dom = int(rng.integers(2, min(4, len(pool)) + 1))
    domains = [d for d in pool if d in set(_shuffled(rng, pool[1:])[: n_dom - 1]) | {pool[0]}]
    if "hotel" in domains and "apartment" in domains:
        domains.remove("apartment")
    chosen: list[tuple[str, str, bool]] = []
    vocab: dict[tuple[str, str], list[str]] = {}
    for dom in domains:
        flds = list(_TRAVEL_DOMAINS[dom]["fields"])
        k = int(rng.integers(2, 5))
        for f in _shuffled(rng, flds)[:k]:
            chosen.append((dom, f, False))
        for f in flds:
            vocab[(dom, f)] = _TRAVEL_DOMAINS[dom]["fields"][f]
    prefs = _make_prefs(rng, "travel", chosen, vocab, _FORCED[index % len(_FORCED)])
    units = []
    for dom in domains:
        spec = _TRAVEL_DOMAINS[dom]
        n = 10
        ids = [f"{spec['prefix']}{i}" for i in rng.permutation(np.arange(1, n + 1))]
        names = [f"{dom.replace('_', ' ')} option {i}" for i in ids]
        items = _make_items(rng, unit=dom, kind=dom, vocab=spec["fields"], options=(),
                            prefs=[p for p in prefs if p.unit == dom], n=n, ids=ids,
                            names=names, price=spec["price"])
        order = [items[0]] + _shuffled(rng, items[1:])
        order.insert(int(rng.integers(0, n)), order.pop(0))
        units.append(_Unit(dom, spec["fields"], (), order))
    city = _pick(rng, _CITIES)
    said = [p for p in prefs if p.up_front]
    wants = "; ".join(f"{p.unit.replace('_', ' ')} {p.field}: {p.value}" for p in said)
    need = ", ".join(d.replace("_", " ") for d in domains)
    narrative = (f"{opener} in {city}. You need to book: {need}."
                 + (f" You already know: {wants}." if wants else ""))
    return _Scenario("travel", task_id, family, narrative, units, prefs, destination=city)


def _rules(scn: _Scenario) -> str:
    lines = ["How to play the user:",
             "- Answer only what the assistant asked; never invent new requirements.",
             "- Share withheld requirements one at a time."]
    for p in scn.prefs:
        what = _label(p.unit, p.field, scn.domain)
        if p.dynamic == "stated":
            lines.append(f"- [{p.pref_id}] Say in your first message that {what} should be "
                         f"{p.value}.")
        elif p.dynamic == "hard_underspec":
            lines.append(f"- [{p.pref_id}] You need {what} = {p.value}; mention it only when "
                         "the assistant asks about it or asks whether anything else matters.")
        elif p.dynamic == "soft_underspec":
            lines.append(f"- [{p.pref_id}] You slightly favour {what} = {p.value} but would "
                         "accept others; say so only if asked about it or shown the choices.")
        elif p.dynamic == "unachievable":
            when = "in your first message" if p.up_front else "when asked"
            lines.append(f"- [{p.pref_id}] You ask for {what} = {p.value} ({when}). Only after "
                         f"the assistant says it cannot be found, settle for {p.backoff}; do "
                         "not mention that fallback earlier.")
        else:
            lines.append(f"- [{p.pref_id}] You have no view on {what} yet. Only if the "
                         f"assistant mentions {p.trigger}, say that you want {p.trigger}.")
    return "\n".join(lines)


def _scenarios(seed: int, domain: str, n: int) -> list[_Scenario]:
    counters: dict[str, int] = {}
    make = _shop_scenario if domain == "shop" else _travel_scenario
    out = []
    for i in range(n):
        rng = np.random.default_rng(np.random.SeedSequence([seed, DOMAINS.index(domain), i]))
        out.append(make(rng, i, counters))
    return out


# ---------------------------------------------------------------------------------------
# Conversation engine
# ---------------------------------------------------------------------------------------


class _StepLimit(Exception):
    """The agent used up its steps."""


@dataclass
class _Truth:
    revealed: bool = False
    elicited: bool = False
    surfaced: bool = False


@dataclass
class _Session:
    scn: _Scenario
    policy: AgentPolicy
    rng: np.random.Generator
    max_steps: int
    messages: list[dict] = field(default_factory=list)
    steps: int = 0
    n_env_actions: int = 0
    n_utterances: int = 0
    n_user_utterances: int = 0
    n_calls: int = 0
    truth: dict[str, _Truth] = field(default_factory=dict)
    known: dict[tuple[str, str], str] = field(default_factory=dict)
    dropped: set = field(default_factory=set)

    # --- message helpers -------------------------------------------------------------
    def _msg(self, role: str, content: str | None, kind: str, **extra: Any) -> dict:
        msg = {"role": role, "content": content, "turn_idx": len(self.messages), "sub_idx": 0,
               "kind": kind, "tool_calls": None, "tool_call_id": None, "error": None,
               "event": None, "event_json": None}
        msg.update(extra)
        self.messages.append(msg)
        return msg

    def _step(self) -> None:
        if self.steps >= self.max_steps:
            raise _StepLimit
        self.steps += 1

    def greet(self, text: str) -> None:
        self._msg("assistant", text, "greeting")

    def say(self, text: str) -> None:
        self._step()
        self.n_utterances += 1
        self._msg("assistant", text, "utterance")

    def act(self, name: str, args: dict[str, Any], thought: str,
            run: Any) -> Any:
        """Send one environment action; ``run()`` returns (observation text, result, error)."""
        self._step()
        self.n_env_actions += 1
        self.n_calls += 1
        call_id = f"call_{self.n_calls}"
        call = {"id": call_id, "name": name, "arguments_json": json.dumps(args),
                "requestor": "assistant"}
        self._msg("assistant", thought, "action", tool_calls=[call])
        text, result, error = run()
        self._msg("tool", text, "observation", tool_call_id=call_id, error=error)
        return result

    def user(self, text: str, reveal: _Pref | None = None, value: str | None = None) -> None:
        self.n_user_utterances += 1
        extra: dict[str, Any] = {}
        if reveal is not None:
            extra = {"event": "PREFERENCE_REVEAL",
                     "event_json": json.dumps({"pref_id": reveal.pref_id, "name": reveal.name,
                                               "dynamic": reveal.dynamic, "value": value})}
        self._msg("user", text, "utterance", **extra)

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return _pick(self.rng, options)

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)


# --- the rule-based user ----------------------------------------------------------------


def _pref_on(scn: _Scenario, unit: str, fld: str) -> _Pref | None:
    return next((p for p in scn.prefs if p.unit == unit and p.field == fld), None)


def _label(unit: str, fld: str, domain: str) -> str:
    return fld if domain == "shop" else f"{unit.replace('_', ' ')} {fld}"


def _reveal(s: _Session, p: _Pref, value: str, text: str, *, elicited: bool) -> None:
    t = s.truth[p.pref_id]
    t.revealed = t.revealed or value == p.target
    t.elicited = t.elicited or elicited
    s.known[(p.unit, p.field)] = value
    s.user(text, reveal=p, value=value)


def _user_answer_field(s: _Session, unit: str, fld: str) -> None:
    """The user answers a question about one feature."""
    p = _pref_on(s.scn, unit, fld)
    lab = _label(unit, fld, s.scn.domain)
    known = s.known.get((unit, fld))
    if p is None or p.dynamic == "triggered" or (unit, fld) in s.dropped:
        s.user(s.pick([f"I don't mind about the {lab}.", f"No preference on {lab}.",
                       f"Any {lab} is fine with me."]))
    elif known is not None:
        s.user(s.pick([f"As I said, {known}.", f"{known.capitalize()}, like I mentioned."]))
    elif p.dynamic == "soft_underspec":
        _reveal(s, p, p.value, s.pick([
            f"I'd lean towards {p.value}, but it's not a big deal.",
            f"Maybe {p.value}? I'm flexible on the {lab} though.",
            f"If I had to pick, {p.value}.",
        ]), elicited=True)
    else:  # hard_underspec, or the primary of an unachievable preference
        _reveal(s, p, p.value, s.pick([
            f"Yes, it has to be {p.value}.", f"Good question: {p.value}, please.",
            f"I need {p.value} for the {lab}.",
        ]), elicited=True)


def _user_answer_generic(s: _Session, unit: str) -> bool:
    """The user names one withheld requirement, or says there is nothing else."""
    for p in s.scn.prefs:
        if (p.unit == unit and not s.truth[p.pref_id].revealed and (unit, p.field) not in s.known
                and p.dynamic in ("hard_underspec", "unachievable")):
            lab = _label(unit, p.field, s.scn.domain)
            _reveal(s, p, p.value, s.pick([
                f"Oh, right: the {lab} should be {p.value}.",
                f"One more thing, I need {p.value} for the {lab}.",
                f"Yes - {p.value} ({lab}).",
            ]), elicited=True)
            return True
    s.user(s.pick(["No, that's everything.", "That's all I can think of.",
                   "Nothing else comes to mind."]))
    return False


def _user_on_unavailable(s: _Session, unit: str, fld: str) -> None:
    p = _pref_on(s.scn, unit, fld)
    s.truth[p.pref_id].surfaced = True
    _reveal(s, p, str(p.backoff), s.pick([
        f"That's a shame. {str(p.backoff).capitalize()} would be fine then.",
        f"Okay, in that case go with {p.backoff}.",
        f"Hmm, then {p.backoff} works as a fallback.",
    ]), elicited=False)


def _user_on_choices(s: _Session, unit: str, fld: str, values: list[str]) -> str | None:
    """The user sees the available values of one feature; returns the value they ask for."""
    p = _pref_on(s.scn, unit, fld)
    lab = _label(unit, fld, s.scn.domain)
    if p is not None and (unit, fld) not in s.dropped:
        known = s.known.get((unit, fld))
        if known is not None and known in values:
            s.user(s.pick([f"{known.capitalize()}, please.", f"I'll take {known}."]))
            return known
        if p.dynamic == "triggered" and p.trigger in values:
            s.truth[p.pref_id].surfaced = True
            _reveal(s, p, str(p.trigger), s.pick([
                f"Oh, {p.trigger}! I hadn't thought about it, but I'd love {p.trigger}.",
                f"Wait, there's {p.trigger}? Then {p.trigger}, definitely.",
                f"Seeing {p.trigger} there, that's the one I want.",
            ]), elicited=False)
            return str(p.trigger)
        if p.dynamic in ("soft_underspec", "hard_underspec", "stated") and p.value in values \
                and known is None:
            _reveal(s, p, p.value, s.pick([f"{p.value.capitalize()}, I think.",
                                           f"Let's go with {p.value}."]), elicited=True)
            return p.value
    s.user(s.pick([f"Any of those {lab} choices is fine.", "Whichever you think is best.",
                   "I don't mind, pick one."]))
    return None


def _user_on_options(s: _Session, unit: str, items: list[_Item]) -> None:
    """Travel: the user sees a few options described in full (may trigger a preference)."""
    for p in s.scn.prefs:
        if p.unit != unit or s.truth[p.pref_id].revealed:
            continue
        shown = any(it.fields[p.field][0] == p.trigger for it in items)
        if p.dynamic == "triggered" and shown:
            s.truth[p.pref_id].surfaced = True
            _reveal(s, p, str(p.trigger), s.pick([
                f"Oh, one of them has {p.trigger}! That's what I'd like.",
                f"{str(p.trigger).capitalize()} sounds great, let's make sure we get that.",
                f"I didn't know {p.trigger} was an option. Yes, I want {p.trigger}.",
            ]), elicited=False)
            return
    s.user(s.pick(["Any of those works for me.", "Those look fine, go ahead.",
                   "Pick whichever fits best."]))


# --- environment ------------------------------------------------------------------------


def _matches(it: _Item, constraints: dict[str, str]) -> bool:
    return all(v in it.fields[f] for f, v in constraints.items())


def _search(unit: _Unit, constraints: dict[str, str], ptype: str | None) -> list[_Item]:
    hits = [it for it in unit.items if _matches(it, constraints)]
    if ptype is not None:  # same product type first, look-alikes after
        hits = [it for it in hits if it.kind == ptype] + [it for it in hits if it.kind != ptype]
    return hits[:6]


def _describe(it: _Item, options: tuple[str, ...]) -> str:
    attrs = "; ".join(f"{f}: {v[0]}" for f, v in it.fields.items() if f not in options)
    line = f"[{it.item_id}] {it.name} - ${it.price:.2f} - {attrs}"
    if options:
        line += " - options: " + "; ".join(f"{f}: {' | '.join(it.fields[f])}" for f in options)
    return line


def _results_text(hits: list[_Item], options: tuple[str, ...]) -> str:
    if not hits:
        return "No results."
    return "\n".join(_describe(it, options) for it in hits)


# --- agent steps shared by both domains ----------------------------------------------------


def _constraints(s: _Session, unit: str) -> dict[str, str]:
    return {f: v for (u, f), v in s.known.items() if u == unit and (u, f) not in s.dropped}


def _elicit(s: _Session, unit: _Unit) -> None:
    pol, dom = s.policy, s.scn.domain
    if pol.ask == "specific":
        for fld in _shuffled(s.rng, list(unit.fields)):
            if (unit.name, fld) in s.known or not s.chance(pol.p_ask_field):
                continue
            lab = _label(unit.name, fld, dom)
            s.say(s.pick([f"Do you have a preference for the {lab}?",
                          f"What {lab} would you like?",
                          f"Before I search: any requirement on {lab}?"]))
            _user_answer_field(s, unit.name, fld)
    elif pol.ask == "generic":
        what = unit.name if dom == "shop" else unit.name.replace("_", " ")
        for _ in range(pol.max_generic):
            s.say(s.pick([f"Is there anything else that matters to you for the {what}?",
                          f"Any other requirements for the {what}?",
                          f"Anything more I should know about the {what}?"]))
            if not _user_answer_generic(s, unit.name):
                break


def _do_search(s: _Session, unit: _Unit, constraints: dict[str, str]) -> list[_Item]:
    ptype = s.scn.product_type
    if s.scn.domain == "shop":
        query = " ".join([*constraints.values(), str(ptype)])
        args: dict[str, Any] = {"query": query}
        thought = s.pick(["Let me search the catalogue.", f"Searching for: {query}.",
                          "I'll look for matching products."])
    else:
        args = {"domain": unit.name, "filters": dict(constraints)}
        thought = s.pick([f"Searching {unit.name.replace('_', ' ')} options.",
                          "Let me check what is available."])

    def run() -> tuple[str, list[_Item], None]:
        hits = _search(unit, constraints, ptype)
        return _results_text(hits, unit.options), hits, None

    return s.act("search", args, thought, run)


def _same_kind(s: _Session, hits: list[_Item]) -> list[_Item]:
    ptype = s.scn.product_type
    return hits if ptype is None else [h for h in hits if h.kind == ptype]


def _find_items(s: _Session, unit: _Unit) -> list[_Item]:
    """Search with everything known; deal with values that nothing offers."""
    for _ in range(8):
        cons = _constraints(s, unit.name)
        hits = _do_search(s, unit, cons)
        if _same_kind(s, hits):
            return hits
        # Find the constraint that empties the results by leaving each out in turn.
        culprit, rest_hits = None, []
        for fld in reversed(list(cons)):
            rest_hits = _do_search(s, unit, {f: v for f, v in cons.items() if f != fld})
            if _same_kind(s, rest_hits):
                culprit = fld
                break
        if culprit is None:
            s.dropped.update((unit.name, f) for f in cons)
            continue
        value = cons[culprit]
        p = _pref_on(s.scn, unit.name, culprit)
        lab = _label(unit.name, culprit, s.scn.domain)
        if p is not None and p.dynamic == "unachievable" and \
                s.chance(s.policy.p_report_unavailable):
            s.say(s.pick([f"I couldn't find any with {value} as the {lab}. Would something "
                          "else work for you?",
                          f"Unfortunately {value} isn't available for the {lab}. Is there an "
                          "alternative you'd accept?",
                          f"Nothing in stock offers {value}. What would you like instead?"]))
            _user_on_unavailable(s, unit.name, culprit)
        elif s.chance(s.policy.p_loop_on_empty):
            while True:  # keeps retrying the same search until the step limit
                _do_search(s, unit, cons)
        else:
            s.dropped.add((unit.name, culprit))
            if s.scn.domain == "shop" and hits and s.chance(0.5):
                return hits  # settles for a look-alike that has the value
            return rest_hits  # silently gives up on the value
    return _do_search(s, unit, {})


def _wander(s: _Session, unit: _Unit) -> None:
    if not s.chance(s.policy.p_wander):
        return
    for _ in range(int(s.rng.integers(5, 24))):
        it = s.pick(unit.items)
        if s.scn.domain == "shop":
            _open_item(s, it, unit)
        else:
            fld = s.pick(list(unit.fields))
            _do_search(s, unit, {fld: it.fields[fld][0]})


def _open_item(s: _Session, it: _Item, unit: _Unit) -> None:
    s.act("click", {"item_id": it.item_id},
          s.pick([f"Let me open {it.item_id}.", f"Checking the details of {it.item_id}."]),
          lambda: (_describe(it, unit.options), None, None))


# --- shop -------------------------------------------------------------------------------


def _run_shop(s: _Session) -> dict[str, Any] | None:
    scn, pol = s.scn, s.policy
    unit = scn.units[0]
    s.greet(s.pick(["Hi! What are you shopping for today?",
                    "Hello, I can help you find a product. What do you need?"]))
    said = [p for p in scn.prefs if p.up_front]
    for p in said:
        s.known[(p.unit, p.field)] = p.value
        s.truth[p.pref_id].revealed = p.value == p.target
    wants = " and ".join(p.value if p.slot == "attribute" else f"{p.name} {p.value}"
                         for p in said)
    s.user(s.pick([f"Hi, I'm looking for a {scn.product_type}",
                   f"I need to buy a {scn.product_type}",
                   f"Could you help me find a {scn.product_type}"])
           + (f", {wants}" if wants else "")
           + s.pick([f". My budget is ${scn.budget:.0f}.",
                     f", under ${scn.budget:.0f} please."]))
    _elicit(s, unit)
    hits = _find_items(s, unit)
    _wander(s, unit)
    pool = [h for h in hits if h.kind == scn.product_type] or hits
    if s.chance(pol.p_respect_budget):
        pool = [h for h in pool if h.price <= float(scn.budget)] or pool
    if pol.n_compare == 1 and s.chance(0.2):
        pool = hits  # a careless pick from the raw list
    chosen = pool[0] if pol.n_compare > 1 else s.pick(pool[:2])
    for it in pool[1:pol.n_compare]:
        _open_item(s, it, unit)
    _open_item(s, chosen, unit)
    selected: dict[str, str] = {}
    for fld in unit.options:
        offered = chosen.fields[fld]
        want = s.known.get((unit.name, fld)) if (unit.name, fld) not in s.dropped else None
        if want not in offered and s.chance(pol.p_show_choices):
            s.say(s.pick([f"It comes in these {fld} choices: {', '.join(offered)}. Which would "
                          "you like?",
                          f"Available {fld}: {', '.join(offered)}. Any favourite?"]))
            want = _user_on_choices(s, unit.name, fld, offered)
        if want in offered:
            s.act("click", {"item_id": chosen.item_id, "option": fld, "value": want},
                  f"Selecting {fld} {want}.", lambda f=fld, w=want: (f"Selected {f}: {w}.",
                                                                     None, None))
            selected[fld] = want
        else:
            selected[fld] = offered[0]  # the page's default
    summary = ", ".join(f"{f} {v}" for f, v in selected.items())
    s.act("buy", {"item_id": chosen.item_id}, "Buying it now.",
          lambda: (f"Order placed: [{chosen.item_id}] {chosen.name}"
                   + (f" ({summary})" if summary else "") + f", ${chosen.price:.2f}.",
                   None, None))
    outcome = {"item_id": chosen.item_id, "name": chosen.name, "price": chosen.price,
               "selected_options": selected,
               "attributes": [v[0] for f, v in chosen.fields.items() if f not in unit.options]}
    final = {f: (selected[f] if f in unit.options else v[0]) for f, v in chosen.fields.items()}
    s.say(s.pick([f"Done! I bought the {chosen.name} for ${chosen.price:.2f}.",
                  f"Your order for {chosen.name} is placed."]))
    s.user(s.pick(["Thanks!", "Great, thank you.", "Perfect, thanks."]))
    outcome["_final"] = {unit.name: final, "_kind": chosen.kind}
    return outcome


# --- travel -----------------------------------------------------------------------------


def _run_travel(s: _Session) -> dict[str, Any]:
    scn, pol = s.scn, s.policy
    s.greet(s.pick(["Hi! Where are you travelling, and what should I book?",
                    "Hello, I can plan and book your trip. What do you need?"]))
    said = [p for p in scn.prefs if p.up_front]
    for p in said:
        s.known[(p.unit, p.field)] = p.value
        s.truth[p.pref_id].revealed = p.value == p.target
    need = ", ".join(u.name.replace("_", " ") for u in scn.units)
    wants = "; ".join(f"{_label(p.unit, p.field, 'travel')}: {p.value}" for p in said)
    s.user(s.pick([f"I'm going to {scn.destination} and need {need}.",
                   f"Trip to {scn.destination}: please book {need}."])
           + (f" What I know so far - {wants}." if wants else ""))
    bookings: dict[str, str] = {}
    final: dict[str, dict[str, str]] = {}
    for unit in scn.units:
        if s.chance(pol.p_forget_domain):
            continue
        _elicit(s, unit)
        hits = _find_items(s, unit)
        _wander(s, unit)
        if s.chance(pol.p_show_choices):
            shown = hits[:3]
            s.say("Here are some options: " + " / ".join(
                f"{it.item_id}: " + ", ".join(v[0] for v in it.fields.values()) for it in shown)
                + ". Which do you prefer?")
            before = dict(s.known)
            _user_on_options(s, unit.name, shown)
            if s.known != before:
                hits = _find_items(s, unit)
        chosen = hits[0] if pol.n_compare > 1 else s.pick(hits[:2])
        if s.chance(pol.p_bad_id):
            other = s.pick([u for u in _TRAVEL_DOMAINS if u != unit.name])
            bad = f"{_TRAVEL_DOMAINS[other]['prefix']}{chosen.item_id[1:]}"
            s.act("book", {"domain": unit.name, "option_id": bad}, f"Booking {bad}.",
                  lambda b=bad, u=unit.name: (f"Error: {b} is not a {u.replace('_', ' ')} "
                                              "option.", None, True))
        s.act("book", {"domain": unit.name, "option_id": chosen.item_id},
              f"Booking {chosen.item_id}.",
              lambda c=chosen: (f"Booked {c.item_id} ({c.name}), ${c.price:.2f}.", None, None))
        bookings[unit.name] = chosen.item_id
        final[unit.name] = {f: v[0] for f, v in chosen.fields.items()}
    done = ", ".join(f"{d.replace('_', ' ')} {i}" for d, i in bookings.items())
    s.say(s.pick([f"All set: {done}.", f"I've booked {done}. Anything else?"]) if bookings
          else "I'm sorry, I could not complete the bookings.")
    s.user(s.pick(["Thanks!", "Great, thank you.", "Okay, thanks."]))
    return {"bookings": bookings, "_final": final}


# ---------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------


def _rollout_seed(seed: int, domain: str, scenario: int, model: str, method: str,
                  rollout: int) -> int:
    ss = np.random.SeedSequence([seed, DOMAINS.index(domain), scenario,
                                 AGENT_MODELS.index(model), METHODS.index(method), rollout])
    return int(ss.generate_state(1, dtype=np.uint32)[0])


def _episode(scn: _Scenario, index: int, model: str, method: str, rollout: int,
             seed: int) -> tuple[dict, list[dict]]:
    rseed = _rollout_seed(seed, scn.domain, index, model, method, rollout)
    s = _Session(scn, POLICIES[(model, method)], np.random.default_rng(rseed),
                 MAX_STEPS[scn.domain], truth={p.pref_id: _Truth() for p in scn.prefs})
    try:
        outcome = _run_shop(s) if scn.domain == "shop" else _run_travel(s)
    except _StepLimit:
        outcome = None
    final = outcome.pop("_final") if outcome else None
    if scn.domain == "shop":
        completed = outcome is not None
    else:
        completed = outcome is not None and set(outcome["bookings"]) == {u.name
                                                                         for u in scn.units}
    rec = empty_episode()
    pid = f"accord/{scn.domain}/{scn.task_id}"
    rec.update({
        "benchmark": "accord", "domain": scn.domain, "scenario_id": pid,
        "task_id": scn.task_id, "rollout": rollout,
        "episode_id": f"{pid}/{model}/{method}/{rollout}", "agent_model": model,
        "method": method, "user_model": USER_MODEL,
        "user_implementation": USER_IMPLEMENTATION, "persona": scn.category,
        "persona_text": scn.narrative, "source": SOURCE, "config": scn.domain, "split": "test",
        "seed": rseed, "instructions": scn.narrative + "\n\n" + _rules(scn),
        "messages": s.messages, "completed": completed,
    })
    satisfied: dict[str, bool | None] = {}
    for p in scn.prefs:
        satisfied[p.pref_id] = (final[p.unit][p.field] == p.target) if completed else None
    rec["preferences"] = [
        {"pref_id": p.pref_id, "name": p.name, "slot": p.slot, "value": p.value,
         "dynamic": p.dynamic, "backoff": p.backoff, "trigger": p.trigger,
         "satisfied": satisfied[p.pref_id]} for p in scn.prefs]
    if outcome is not None:
        rec["outcome_json"] = json.dumps(outcome)
    if scn.domain == "shop" and completed:
        rec["product_type_ok"] = final["_kind"] == scn.product_type
        rec["price_ok"] = bool(outcome["price"] <= float(scn.budget))
    validate_episode(rec)
    truth = [{"episode_id": rec["episode_id"], "scenario_id": pid, "domain": scn.domain,
              "agent_model": model, "method": method, "rollout": rollout,
              "pref_id": p.pref_id, "dynamic": p.dynamic, "target": p.target,
              "revealed": s.truth[p.pref_id].revealed, "elicited": s.truth[p.pref_id].elicited,
              "surfaced": s.truth[p.pref_id].surfaced, "satisfied": satisfied[p.pref_id],
              "completed": completed, "n_env_actions": s.n_env_actions,
              "n_utterances": s.n_utterances, "n_user_utterances": s.n_user_utterances}
             for p in scn.prefs]
    return rec, truth


def generate_accord(*, seed: int = 0, n_scenarios: int = 24) -> tuple[list[dict], pd.DataFrame]:
    """Simulate AcCoRD episodes for both domains, with the simulator's ground truth.

    Every (scenario, agent model, method) is played :data:`N_ROLLOUTS` times with its own
    seed, derived from ``(seed, domain, scenario, model, method, rollout)``; the same ``seed``
    gives bit-identical output.

    Parameters
    ----------
    seed : int
        Non-negative master seed.
    n_scenarios : int
        Scenarios per domain.

    Returns
    -------
    records : list of dict
        Canonical episodes (the columns of :data:`accordkit.schema.EPISODE_FEATURES`), in the
        order domain, scenario, agent model, method, rollout.
    truth : pandas.DataFrame
        One row per (episode, preference): ``episode_id``, ``scenario_id``, ``domain``,
        ``agent_model``, ``method``, ``rollout``, ``pref_id``, ``dynamic``, ``target``,
        ``revealed`` (the user disclosed the value that is judged, or it was said up front),
        ``elicited`` (disclosed in answer to the agent's question), ``surfaced`` (triggered:
        the agent showed the trigger value; unachievable: the agent said the primary is
        unavailable), ``satisfied`` (NA when not completed), and the episode's ``completed``,
        ``n_env_actions``, ``n_utterances``, ``n_user_utterances``.

    Examples
    --------
    >>> records, truth = generate_accord(seed=0, n_scenarios=2)
    >>> len(records)  # 2 domains x 2 scenarios x 2 models x 2 methods x 3 rollouts
    48
    >>> records[0]["episode_id"]
    'accord/shop/beauty000/sim-basic-1/react/0'
    """
    if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not isinstance(n_scenarios, int | np.integer) or n_scenarios < 1:
        raise ValueError(f"n_scenarios must be a positive integer, got {n_scenarios!r}")
    records: list[dict] = []
    truth: list[dict] = []
    for domain in DOMAINS:
        for i, scn in enumerate(_scenarios(int(seed), domain, int(n_scenarios))):
            for model in AGENT_MODELS:
                for method in METHODS:
                    for r in range(N_ROLLOUTS):
                        rec, rows = _episode(scn, i, model, method, r, int(seed))
                        records.append(rec)
                        truth.extend(rows)
    frame = pd.DataFrame(truth)
    for col in ("revealed", "elicited", "surfaced", "satisfied", "completed"):
        frame[col] = frame[col].astype("boolean")
    for col in ("rollout", "n_env_actions", "n_utterances", "n_user_utterances"):
        frame[col] = frame[col].astype("Int64")
    return records, frame
