"""A deterministic scripted simulator for AgentChangeBench-style goal-shift conversations.

It writes the sample data in ``data/sample/goalshift/``: banking, airline and retail tasks
with ordered goal sequences (0 to 3 shifts), the five personas, several trials per task and
two scripted agents of different quality. A rule-based user states a goal, later switches
to the next one; the agents either acknowledge the switch at once, keep working on the old
plan for a turn, hand off to a human, or never get there before the step limit. Tool calls
include deliberate repeats (a lookup repeated 2 or 4 assistant turns later, three identical
calls in one message, several calls of one function with different arguments).

Everything the real pipeline would store is simulated the same way it is computed there:
``tsr_details`` and ``reward`` with the upstream first-call action rule, NL verdicts from a
seeded stand-in judge (sometimes failing), and the goal-shift judge output, which here is the
ground truth. A few episodes carry no judge output and instead mark the user's shift messages
with ``GOAL_SHIFT`` events (the meta-tag path).

Records are put together with the builders of :mod:`accordkit.testing`.

Every random choice comes from ``numpy.random.default_rng`` seeded by a
``numpy.random.SeedSequence`` derived from ``seed`` and the position of the task / rollout,
so the same seed gives bit-identical records.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..testing import build_episode, criteria, judge_output, message

__all__ = [
    "generate_goalshift",
    "AGENT_MODELS",
    "PERSONA_TEXT",
    "DOMAINS",
]

DOMAINS = ("banking", "airline", "retail")
PERSONAS = ("EASY_1", "EASY_2", "MEDIUM_1", "MEDIUM_2", "HARD_1")

#: Short persona descriptions written for the sample data (not the benchmark's texts).
PERSONA_TEXT = {
    "EASY_1": "Patient and organised. States one request at a time, gives details when asked "
              "and says clearly when moving on to something else.",
    "EASY_2": "Friendly and talkative, but cooperative. Mentions the next request politely "
              "once the current one is done.",
    "MEDIUM_1": "Busy and a little impatient. Expects quick answers and changes topic as soon "
                "as the current answer is good enough.",
    "MEDIUM_2": "Cautious about security. Asks why information is needed and may repeat a "
                "question when an answer sounds vague.",
    "HARD_1": "Stressed and terse. Switches requests abruptly, sometimes mid-answer, and "
              "rarely explains the switch.",
}
_PERSONA_DIFFICULTY = {"EASY_1": 0.0, "EASY_2": 0.05, "MEDIUM_1": 0.12, "MEDIUM_2": 0.12,
                       "HARD_1": 0.25}

USER_MODEL = "sim-user-v1"
USER_IMPLEMENTATION = "user_simulator"
METHOD = "llm_agent"
NUM_TRIALS = 3
BASE_WEIGHTS = (("action", 0.45), ("nl_assertion", 0.30), ("communicate_info", 0.25))


@dataclass(frozen=True)
class AgentPolicy:
    """Behaviour probabilities of one scripted agent."""

    drift: float          # keeps working on the old goal for one turn after a shift
    transfer: float       # hands the new goal off to a human
    stall: float          # never gets to the new goal before the step limit
    ack_with_tool: float  # acknowledges and calls the first tool in the same message
    wrong_params: float   # first action call has a wrong argument (corrected next turn)
    float_params: float   # writes an integer argument as a float (still correct)
    reverify: float       # repeats the identity lookup at the start of a new goal
    batch_same: float     # three identical lookups in one message
    batch_names: float    # one function called for several different arguments at once
    tool_error: float     # a lookup fails once and is retried
    communicate: float    # the outcome message states the required information
    nl_met: float         # chance that each NL assertion is judged met
    judge_fails: float    # the NL judge call fails (verdicts missing)


#: The two scripted agents: one acknowledges shifts quickly, one persists with the old plan.
AGENT_MODELS = {
    "sim-attentive": AgentPolicy(drift=0.08, transfer=0.03, stall=0.0, ack_with_tool=0.35,
                                 wrong_params=0.08, float_params=0.25, reverify=0.05,
                                 batch_same=0.04, batch_names=0.12, tool_error=0.06,
                                 communicate=0.96, nl_met=0.93, judge_fails=0.03),
    "sim-persistent": AgentPolicy(drift=0.55, transfer=0.18, stall=0.06, ack_with_tool=0.1,
                                  wrong_params=0.35, float_params=0.25, reverify=0.45,
                                  batch_same=0.25, batch_names=0.2, tool_error=0.12,
                                  communicate=0.75, nl_met=0.6, judge_fails=0.05),
}


# --------------------------------------------------------------------------- domains


@dataclass(frozen=True)
class Goal:
    """One goal of a task, with everything the script needs to play it."""

    token: str
    ask: tuple[str, ...]                      # user phrasings
    lookup: tuple[str, dict[str, Any]]        # read call made first
    lookup_result: dict[str, Any]
    action: tuple[str, dict[str, Any]]        # the expected action (one action set)
    alt_action: tuple[str, dict[str, Any]] | None
    wrong: dict[str, Any]                     # action params with one wrong value
    float_key: str | None                     # integer param that may be written as float
    variants: tuple[dict[str, Any], ...]      # other lookup arguments (batch by name)
    info: str                                 # what must be communicated
    ack: str
    outcome: str                              # contains ``info``
    vague: str                                # outcome message without ``info``


def _digits(rng: np.random.Generator, n: int) -> str:
    return "".join(str(d) for d in rng.integers(0, 10, size=n))


def _banking_goals(rng: np.random.Generator) -> tuple[dict[str, Goal], tuple[str, dict]]:
    cid = f"C{_digits(rng, 5)}"
    acct, acct2, acct3 = (f"CHK-{_digits(rng, 4)}" for _ in range(3))
    card = f"CARD-{_digits(rng, 4)}"
    txn, txn2 = f"TX{_digits(rng, 6)}", f"TX{_digits(rng, 6)}"
    payee = f"PY-{_digits(rng, 3)}"
    amount = int(rng.integers(4, 40)) * 10
    bal = f"{int(rng.integers(1, 9))},{_digits(rng, 3)}.{_digits(rng, 2)}"
    merchant = str(rng.choice(["Blue Fern Grocers", "Harbor Fuel", "Northside Pharmacy",
                               "Quill & Ink Books"]))
    dsp, pay, frd = f"DSP-{_digits(rng, 4)}", f"PAY-{_digits(rng, 4)}", f"FRD-{_digits(rng, 4)}"
    month = str(rng.choice(["2025-03", "2025-04", "2025-05", "2025-06"]))
    auth = ("get_customer_by_phone", {"phone": f"555-01{_digits(rng, 2)}"})
    goals = {
        "account_info": Goal(
            "account_info", ("What's the balance on my checking account?",
                             "Can you tell me how much is in checking right now?"),
            ("get_accounts", {"customer_id": cid}), {"accounts": [acct, acct2]},
            ("get_account_balance", {"account_id": acct}), None,
            {"account_id": acct2}, None, ({"customer_id": cid, "include_closed": True},),
            bal, "Sure, let me look up your checking balance.",
            f"Your checking account {acct} has an available balance of ${bal}.",
            "I found your checking account; the balance is shown in your app."),
        "transactions": Goal(
            "transactions", ("I want to see my recent transactions.",
                             "Can you go through my last few card payments?"),
            ("get_transactions", {"account_id": acct, "limit": 10}),
            {"transactions": [{"id": txn, "merchant": merchant}]},
            ("get_transaction_details", {"transaction_id": txn}), None,
            {"transaction_id": txn2}, None,
            ({"account_id": acct2, "limit": 10}, {"account_id": acct3, "limit": 10}),
            merchant, "Of course, let's go through your recent transactions.",
            f"The most recent charge, {txn}, was at {merchant}.",
            "Your most recent charge looks like an ordinary purchase."),
        "dispute": Goal(
            "dispute", ("There's a charge I don't recognise, I want to dispute it.",
                        "Someone charged my account and it wasn't me."),
            ("get_transactions", {"account_id": acct, "limit": 20}),
            {"transactions": [{"id": txn, "merchant": merchant}]},
            ("file_dispute", {"account_id": acct, "transaction_id": txn,
                              "reason": "unauthorized"}),
            ("open_dispute_case", {"transaction_id": txn}),
            {"account_id": acct, "transaction_id": txn2, "reason": "unauthorized"}, None,
            ({"account_id": acct2, "limit": 20},),
            dsp, "I understand, let's dispute that charge.",
            f"I've filed the dispute; your case number is {dsp}.",
            "The dispute is filed and you'll hear back soon."),
        "payments": Goal(
            "payments", (f"I need to pay ${amount} to my landlord.",
                         f"Please send ${amount} to my saved payee."),
            ("get_payees", {"customer_id": cid}), {"payees": [payee]},
            ("make_payment", {"account_id": acct, "payee_id": payee, "amount": amount}), None,
            {"account_id": acct, "payee_id": payee, "amount": amount + 90}, "amount",
            ({"customer_id": cid, "active_only": True},),
            pay, "Happy to help with that payment.",
            f"Done: ${amount} was sent, confirmation {pay}.",
            "The payment has been sent."),
        "statements": Goal(
            "statements", ("Can I get my statement for last month?",
                           "I need a copy of a monthly statement."),
            ("get_statements", {"account_id": acct}), {"statements": [month]},
            ("send_statement", {"account_id": acct, "month": month, "delivery": "email"}), None,
            {"account_id": acct, "month": "2024-12", "delivery": "email"}, None,
            ({"account_id": acct2},),
            f"statement for {month}", "Sure, let's get that statement to you.",
            f"I've emailed your statement for {month}.",
            "Your statement is on its way."),
        "cards": Goal(
            "cards", ("I lost my debit card, can you lock it?",
                      "My card is missing, please block it."),
            ("get_cards", {"customer_id": cid}), {"cards": [card]},
            ("lock_card", {"card_id": card, "reason": "lost"}), None,
            {"card_id": card, "reason": "stolen"}, None,
            ({"customer_id": cid, "status": "active"},),
            f"card ending {card[-4:]}", "Let's lock that card right away.",
            f"Your card ending {card[-4:]} is now locked.",
            "Your card is now locked."),
        "fraud_response": Goal(
            "fraud_response", ("I think my card was used for fraud, two charges are wrong.",
                               "There are fraudulent charges on my card."),
            ("get_cards", {"customer_id": cid, "status": "active"}), {"cards": [card]},
            ("report_fraud", {"card_id": card, "transaction_ids": sorted([txn, txn2])}), None,
            {"card_id": card, "transaction_ids": [txn]}, None,
            ({"customer_id": cid, "status": "blocked"},),
            frd, "That's serious; let's report the fraud now.",
            f"Fraud report {frd} is open and the card is frozen.",
            "The fraud report is open."),
    }
    return goals, auth


def _airline_goals(rng: np.random.Generator) -> tuple[dict[str, Goal], tuple[str, dict]]:
    uid = f"user_{_digits(rng, 4)}"
    res, res2 = f"R{_digits(rng, 5)}", f"R{_digits(rng, 5)}"
    flight = f"HAT{_digits(rng, 3)}"
    new_flight = f"HAT{_digits(rng, 3)}"
    date = f"2025-05-{int(rng.integers(10, 28))}"
    pay = f"credit_card_{_digits(rng, 4)}"
    refund = int(rng.integers(120, 480))
    origin, dest = (str(x) for x in rng.choice(["JFK", "SEA", "ORD", "LAX", "DEN", "BOS"],
                                                size=2, replace=False))
    auth = ("get_user_details", {"user_id": uid})
    goals = {
        "booking_lookup": Goal(
            "booking_lookup", ("Can you check my upcoming booking?",
                               "I'd like the details of my reservation."),
            ("get_user_details", {"user_id": uid, "fields": ["reservations"]}),
            {"reservations": [res, res2]},
            ("get_reservation_details", {"reservation_id": res}), None,
            {"reservation_id": res2}, None, ({"user_id": uid, "fields": ["payments"]},),
            flight, "Sure, let me find your reservation.",
            f"Reservation {res} is on flight {flight} from {origin} to {dest}.",
            "Your reservation is confirmed."),
        "change_flight": Goal(
            "change_flight", (f"I need to move my flight to {date}.",
                              f"Can I change to a flight on {date}?"),
            ("search_direct_flight", {"origin": origin, "destination": dest, "date": date}),
            {"flights": [new_flight]},
            ("update_reservation_flights", {"reservation_id": res, "cabin": "economy",
                                            "flights": [{"flight_number": new_flight,
                                                         "date": date}],
                                            "payment_id": pay}), None,
            {"reservation_id": res, "cabin": "business",
             "flights": [{"flight_number": new_flight, "date": date}], "payment_id": pay},
            None,
            ({"origin": origin, "destination": dest, "date": "2025-05-30"},),
            new_flight, "No problem, let's look at other flights.",
            f"You're now booked on {new_flight} on {date}.",
            "Your flight has been changed."),
        "cancel_reservation": Goal(
            "cancel_reservation", ("Actually, please cancel the whole trip.",
                                   "I want to cancel my reservation."),
            ("get_reservation_details", {"reservation_id": res, "include_history": True}),
            {"status": "confirmed", "refundable": True},
            ("cancel_reservation", {"reservation_id": res}), None,
            {"reservation_id": res2}, None,
            ({"reservation_id": res2, "include_history": True},),
            f"${refund}", "Understood, let's cancel it.",
            f"The reservation is cancelled and ${refund} will be refunded.",
            "The reservation is cancelled."),
        "baggage": Goal(
            "baggage", ("I want to add two checked bags.",
                        "Can I add luggage to the booking?"),
            ("get_reservation_details", {"reservation_id": res, "section": "baggage"}),
            {"total_baggages": 0},
            ("update_reservation_baggages", {"reservation_id": res, "total_baggages": 2,
                                             "nonfree_baggages": 1, "payment_id": pay}), None,
            {"reservation_id": res, "total_baggages": 1, "nonfree_baggages": 1,
             "payment_id": pay}, "total_baggages",
            ({"reservation_id": res2, "section": "baggage"},),
            "2 checked bags", "Sure, let's add bags.",
            "You now have 2 checked bags on the booking.",
            "The bags were added."),
        "seat_upgrade": Goal(
            "seat_upgrade", ("Could I upgrade to business?",
                             "I'd like a better cabin on that flight."),
            ("get_reservation_details", {"reservation_id": res, "section": "cabin"}),
            {"cabin": "economy"},
            ("update_reservation_cabin", {"reservation_id": res, "cabin": "business",
                                          "payment_id": pay}), None,
            {"reservation_id": res, "cabin": "premium_economy", "payment_id": pay}, None,
            ({"reservation_id": res2, "section": "cabin"},),
            "business class", "Let's see about an upgrade.",
            "You're upgraded to business class.",
            "Your cabin was upgraded."),
    }
    return goals, auth


def _retail_goals(rng: np.random.Generator) -> tuple[dict[str, Goal], tuple[str, dict]]:
    email = f"sam.{_digits(rng, 3)}@example.com"
    uid = f"sam_{_digits(rng, 4)}"
    order, order2 = f"#W{_digits(rng, 7)}", f"#W{_digits(rng, 7)}"
    items = sorted(str(x) for x in rng.integers(10**9, 10**10, size=2))
    new_item = str(int(rng.integers(10**9, 10**10)))
    pm = f"gift_card_{_digits(rng, 5)}"
    zip_code = _digits(rng, 5)
    product = f"P{_digits(rng, 6)}"
    auth = ("find_user_id_by_email", {"email": email})
    goals = {
        "order_status": Goal(
            "order_status", ("Where is my order?", "Has my last order shipped yet?"),
            ("get_user_details", {"user_id": uid}), {"orders": [order, order2]},
            ("get_order_details", {"order_id": order}), None,
            {"order_id": order2}, None, ({"user_id": uid, "section": "payments"},),
            "shipped", "Let me check on that order.",
            f"Order {order} has shipped and should arrive in two days.",
            "Your order is on its way."),
        "return_item": Goal(
            "return_item", ("I want to return the headphones from that order.",
                            "Can I send back one of the items?"),
            ("get_order_details", {"order_id": order, "section": "items"}),
            {"items": items},
            ("return_delivered_order_items", {"order_id": order, "item_ids": items[:1],
                                              "payment_method_id": pm}), None,
            {"order_id": order, "item_ids": items, "payment_method_id": pm}, None,
            ({"order_id": order2, "section": "items"},),
            "refund", "Sure, let's set up a return.",
            "The return is set up; your refund goes to the gift card.",
            "The return is set up."),
        "exchange_item": Goal(
            "exchange_item", ("Could I exchange the lamp for another colour?",
                              "I'd rather swap the item for a different one."),
            ("get_product_details", {"product_id": product}), {"variants": [new_item]},
            ("exchange_delivered_order_items", {"order_id": order, "item_ids": items[1:],
                                                "new_item_ids": [new_item],
                                                "payment_method_id": pm}), None,
            {"order_id": order, "item_ids": items[:1], "new_item_ids": [new_item],
             "payment_method_id": pm}, None,
            ({"product_id": f"P{_digits(rng, 6)}"},),
            f"item {new_item}", "Let's find you a replacement.",
            f"The exchange is placed; the new item {new_item} ships tomorrow.",
            "The exchange is placed."),
        "update_address": Goal(
            "update_address", ("I moved, please update my address.",
                               "My address changed, can you fix it on my account?"),
            ("get_user_details", {"user_id": uid, "section": "address"}),
            {"address": "old"},
            ("modify_user_address", {"user_id": uid, "address1": "12 Elm Street",
                                     "city": "Springfield", "zip": zip_code,
                                     "country": "USA"}), None,
            {"user_id": uid, "address1": "12 Elm St", "city": "Springfield", "zip": zip_code,
             "country": "USA"}, None,
            ({"user_id": uid, "section": "orders"},),
            zip_code, "Sure, let's update the address.",
            f"Your address is now 12 Elm Street, Springfield {zip_code}.",
            "Your address is updated."),
        "cancel_order": Goal(
            "cancel_order", ("Please cancel the other pending order.",
                             "I don't need the second order any more, cancel it."),
            ("get_order_details", {"order_id": order2}), {"status": "pending"},
            ("cancel_pending_order", {"order_id": order2, "reason": "no longer needed"}), None,
            {"order_id": order2, "reason": "ordered by mistake"}, None,
            ({"order_id": order, "section": "status"},),
            "cancelled", "Okay, let's cancel that order.",
            f"Order {order2} is cancelled and the payment reversed.",
            "That order won't ship."),
    }
    return goals, auth


_GOAL_BUILDERS = {"banking": _banking_goals, "airline": _airline_goals, "retail": _retail_goals}
_SERVICE = {"banking": "Rivermark Bank", "airline": "Heron Air", "retail": "Lumen Goods"}
_NL_POOL = (
    "The agent confirmed what the customer wanted before making a change.",
    "The agent acknowledged each new request instead of continuing the previous one.",
    "The agent explained the result of every request it handled.",
    "The agent did not ask for information the customer had already given.",
    "The agent kept the customer informed about what it was doing.",
)
_GOAL_COUNTS = (1, 2, 3, 4, 2, 3, 2, 4, 1, 3, 2, 3)


@dataclass(frozen=True)
class Task:
    domain: str
    task_id: str
    persona: str
    goals: tuple[Goal, ...]
    auth: tuple[str, dict[str, Any]]
    communicate: tuple[str, ...]
    nl_assertions: tuple[str, ...]
    instructions: str


def _make_task(domain: str, index: int, rng: np.random.Generator) -> Task:
    catalogue, auth = _GOAL_BUILDERS[domain](rng)
    n_goals = _GOAL_COUNTS[index % len(_GOAL_COUNTS)]
    tokens = list(catalogue)
    order = rng.permutation(len(tokens))[:n_goals]
    goals = tuple(catalogue[tokens[i]] for i in order)
    persona = PERSONAS[index % len(PERSONAS)]
    communicate = () if index % 4 == 1 else tuple(g.info for g in goals)
    nl = () if index % 5 == 3 else tuple(
        _NL_POOL[i] for i in sorted(rng.permutation(len(_NL_POOL))[: 2 + index % 2]))
    instructions = json.dumps({
        "domain": domain,
        "reason_for_call": " Then: ".join(g.ask[0] for g in goals),
        "known_info": f"{auth[0]} {json.dumps(auth[1])}",
        "task_instructions": "Raise the requests one at a time, in this order.",
    })
    return Task(domain, f"{domain}_gs_{index:03d}", persona, goals, auth, communicate, nl,
                instructions)


# --------------------------------------------------------------------------- the script


def _plain(value: Any) -> Any:
    """Integral floats as ints (1.0 and 1 are the same call), lists sorted, recursively."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_plain(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _key(name: str, args: Mapping[str, Any]) -> str:
    return name + json.dumps(_plain(dict(args)), sort_keys=True)


class _Script:
    """Builds one conversation and records its ground truth while doing so."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.msgs: list[dict[str, Any]] = []
        self.turn = 0                                  # assistant turns so far
        self.seen: dict[str, list[int]] = {}           # call identity -> assistant turns
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.redundant: list[tuple[int, int]] = []     # (turn_idx, call index)
        self.n_call_ids = 0

    def user(self, text: str, **kw: Any) -> int:
        self.msgs.append(message("user", text, **kw))
        return len(self.msgs) - 1

    def agent(self, text: str | None, calls: Sequence[tuple[str, dict[str, Any]]] = (),
              results: Sequence[tuple[Any, bool]] | None = None, **kw: Any) -> int:
        """An assistant message; its tool calls are answered by tool messages right after."""
        self.turn += 1
        idx = len(self.msgs)
        ids = []
        for _ in calls:
            self.n_call_ids += 1
            ids.append(f"call_{self.n_call_ids:02d}_{int(self.rng.integers(16**6)):06x}")
        self.msgs.append(message("assistant", text,
                                 calls=[(n, a, i) for (n, a), i in zip(calls, ids, strict=True)]
                                 if calls else None, **kw))
        # Ground truth for the per-episode TCRR rule: an identity repeated from the previous
        # three assistant turns makes every copy redundant; otherwise copies beyond two are.
        window = range(max(1, self.turn - 3), self.turn)
        groups: dict[str, list[int]] = {}
        for k, (name, args) in enumerate(calls):
            groups.setdefault(_key(name, args), []).append(k)
        for key, members in groups.items():
            hit = any(t in window for t in self.seen.get(key, ()))
            flagged = members if hit else members[2:]
            self.redundant.extend((idx, k) for k in flagged)
        for key in groups:
            self.seen.setdefault(key, []).append(self.turn)
        for k, (name, args) in enumerate(calls):
            self.calls.append((name, dict(args)))
            content, error = results[k] if results is not None else ({"ok": True}, False)
            text_out = content if isinstance(content, str) else json.dumps(content)
            self.msgs.append(message("tool", text_out, tool_call_id=ids[k], error=error))
        return idx


def _params_match(actual: Mapping[str, Any], expected: Mapping[str, Any]) -> bool:
    return all(k in actual and actual[k] == v for k, v in expected.items())


def _stored_tsr(task: Task, script: _Script, verdicts: list[bool] | None
                ) -> tuple[dict[str, Any], dict[str, float]]:
    """TSR as the upstream pipeline stores it (first call of each tool) and best-match TSR."""
    sets = [[g.action] + ([g.alt_action] if g.alt_action else []) for g in task.goals]
    first: dict[str, dict[str, Any]] = {}
    for name, args in script.calls:
        first.setdefault(name, args)
    up, best = [], []
    for tools in sets:
        up.append(max(0.5 + 0.5 * _params_match(first[n], p) if n in first else 0.0
                      for n, p in tools))
        best.append(max(max([0.5 + 0.5 * _params_match(a, p)
                             for name, a in script.calls if name == n], default=0.0)
                        for n, p in tools))
    text = " ".join(m["content"] for m in script.msgs
                    if m["role"] == "assistant" and m["content"]).lower()
    channels_up: dict[str, float] = {"action": sum(up) / len(up)}
    channels_best: dict[str, float] = {"action": sum(best) / len(best)}
    if task.nl_assertions and verdicts is not None:
        nl = sum(verdicts) / len(task.nl_assertions)
        channels_up["nl_assertion"] = channels_best["nl_assertion"] = nl
    if task.communicate:
        comm = sum(info.lower() in text for info in task.communicate) / len(task.communicate)
        channels_up["communicate_info"] = channels_best["communicate_info"] = comm

    def combine(channels: dict[str, float]) -> tuple[float, dict[str, float]]:
        active = {k: w for k, w in BASE_WEIGHTS if k in channels}
        total = sum(active.values())
        weights = {k: w / total for k, w in active.items()}
        tsr = 0.0
        for k in ("communicate_info", "action", "nl_assertion"):
            if k in weights:
                tsr += weights[k] * channels[k]
        return tsr, weights

    tsr_up, weights = combine(channels_up)
    tsr_best, _ = combine(channels_best)
    details = {
        "overall_tsr": tsr_up,
        "action": channels_up.get("action"),
        "nl_assertion": channels_up.get("nl_assertion"),
        "communicate_info": channels_up.get("communicate_info"),
        "weight_action": weights.get("action"),
        "weight_nl_assertion": weights.get("nl_assertion"),
        "weight_communicate_info": weights.get("communicate_info"),
        "has_actions": True,
        "has_nl_assertions": "nl_assertion" in channels_up,
        "has_communicate_info": "communicate_info" in channels_up,
    }
    return details, {"tsr_first_call": tsr_up, "tsr_best_match": tsr_best}


def _shift_text(persona: str, goal: Goal, rng: np.random.Generator) -> str:
    ask = str(rng.choice(goal.ask))
    if persona == "HARD_1":
        return ask
    lead = str(rng.choice(["Thanks. Also, ", "Great. Now, ", "Okay, one more thing: ",
                           "Thanks for that. Next, "]))
    return lead + ask[0].lower() + ask[1:]


def _play(task: Task, policy: AgentPolicy, rng: np.random.Generator
          ) -> tuple[_Script, list[dict[str, Any]], str, list[str]]:
    """Run the scripted conversation; return it, the true shifts, termination and behaviours."""
    s = _Script(rng)
    hard = _PERSONA_DIFFICULTY[task.persona]
    behaviours: list[str] = []
    s.agent(f"Hello, thanks for contacting {_SERVICE[task.domain]}. How can I help you today?")
    s.user(f"Hi. {rng.choice(task.goals[0].ask)}")
    s.agent(None, [task.auth], [({"found": True}, False)])
    last_lookup: tuple[str, dict[str, Any]] = task.auth
    shifts: list[dict[str, Any]] = []
    termination = "user_stop"

    for i, goal in enumerate(task.goals):
        shift: dict[str, Any] | None = None
        if i > 0:
            prev = task.goals[i - 1]
            turn = s.user(_shift_text(task.persona, goal, rng))
            shift = {"turn": turn, "from_goal": prev.token, "to_goal": goal.token,
                     "ack_turn": None, "tool_turn": None, "outcome_turn": None,
                     "transferred": False, "agent_turn": turn + 1}
            shifts.append(shift)
            roll = rng.random()
            if roll < policy.stall:
                behaviours.append("stall")
                for _ in range(2):
                    s.agent(f"Let me finish checking your {prev.token.replace('_', ' ')} first.",
                            [last_lookup])
                    s.user(f"Please, I asked about something else. {goal.ask[0]}")
                termination = "max_steps"
                return s, shifts, termination, behaviours
            if roll < policy.stall + policy.transfer:
                behaviours.append("transfer")
                s.agent("I'm not able to handle that here; let me transfer you to a human "
                        "agent who can help.",
                        [("transfer_to_human_agents",
                          {"summary": f"Customer asks about {goal.token}"})],
                        [("Transfer successful", False)])
                s.user("###TRANSFER###")
                shift["transferred"] = True
                return s, shifts, termination, behaviours
            if rng.random() < policy.drift + hard:
                behaviours.append("drift")
                s.agent(f"Before we switch, let me double-check your "
                        f"{prev.token.replace('_', ' ')} details.", [last_lookup])
                s.user(f"No, I really need help with this now: {goal.ask[0]}")
        with_ack = shift is not None and rng.random() < policy.ack_with_tool
        if shift is not None and not with_ack:
            shift["ack_turn"] = s.agent(goal.ack)
        if i > 0 and rng.random() < policy.reverify:
            behaviours.append("reverify")
            s.agent("For security, let me confirm your identity again.", [task.auth])

        # The lookup, possibly as a batch, possibly failing once.
        calls = [goal.lookup]
        if rng.random() < policy.batch_same:
            behaviours.append("batch_same")
            calls = [goal.lookup] * 3
        elif rng.random() < policy.batch_names:
            behaviours.append("batch_names")
            variants = [dict(v) for v in goal.variants[:2]]
            if len(variants) < 2:
                variants.append(dict(variants[0], page=2))
            calls = [goal.lookup] + [(goal.lookup[0], v) for v in variants]
        fails = rng.random() < policy.tool_error
        results = [("Error: service temporarily unavailable, try again", True) if fails
                   else (goal.lookup_result, False)]
        results += [(goal.lookup_result, False)] * (len(calls) - 1)
        idx = s.agent(goal.ack if with_ack else None, calls, results)
        if shift is not None:
            shift["tool_turn"] = idx
            if with_ack:
                shift["ack_turn"] = idx
        if fails:
            behaviours.append("retry")
            s.agent("That didn't go through; trying again.", [goal.lookup],
                    [(goal.lookup_result, False)])
        last_lookup = goal.lookup

        # The action, perhaps first with a wrong argument (an error result now and then).
        name, params = goal.action
        if rng.random() < policy.wrong_params:
            behaviours.append("wrong_params")
            bad = rng.random() < 0.3
            s.agent(None, [(name, goal.wrong)],
                    [("Error: invalid parameter in request", True) if bad else ({"ok": True},
                                                                                False)])
            s.agent("Sorry, I used the wrong details there; correcting it now.")
        args = dict(params)
        if goal.float_key and rng.random() < policy.float_params:
            behaviours.append("float_param")
            args[goal.float_key] = float(args[goal.float_key])
        s.agent(None, [(name, args)], [({"status": "done"}, False)])

        says_info = rng.random() < policy.communicate
        idx = s.agent(goal.outcome if says_info else goal.vague)
        if shift is not None:
            shift["outcome_turn"] = idx
    s.user("That's everything, thank you! ###STOP###")
    return s, shifts, termination, behaviours


def _seq(seed: int, *key: int) -> np.random.SeedSequence:
    return np.random.SeedSequence(seed, spawn_key=key)


def _episode_uuid(ss: np.random.SeedSequence) -> str:
    words = ss.generate_state(4, dtype=np.uint32)
    return str(uuid.UUID(bytes=words.astype(">u4").tobytes(), version=4))


def _meta_event(k: int, shift: Mapping[str, Any]) -> dict[str, Any]:
    return {"event": "GOAL_SHIFT", "seq": k + 1, "from_": shift["from_goal"],
            "to": shift["to_goal"], "reason": "MANUAL", "task": None, "note": None,
            "raw": f"<meta>GOAL_SHIFT seq={k + 1} from={shift['from_goal']} "
                   f"to={shift['to_goal']}</meta>", "error": None}


def generate_goalshift(*, seed: int = 0, n_tasks_per_domain: int = 12
                       ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Generate the goal-shift sample episodes and their ground truth.

    Parameters
    ----------
    seed : int
        Root seed; the same seed gives bit-identical output.
    n_tasks_per_domain : int
        Tasks per domain (banking, airline, retail). Each task is played by every agent in
        :data:`AGENT_MODELS` for three trials.

    Returns
    -------
    records : list of dict
        Canonical episodes (validated), in domain, agent, task, trial order.
    truth : dict
        ``{"seed", "episodes": {episode_id: {...}}}`` with, per episode, the shift source
        (``judge``/``meta``/``none``), every true shift (``shift_turn``, ``from_goal``,
        ``to_goal``, ``ack_turn``, ``tool_turn``, ``outcome_turn``, ``transferred``), the
        calls redundant under the default per-episode TCRR rule as ``[turn_idx, call
        index]`` pairs, ``n_tool_calls``, the TSR under the first-call and best-match action
        rules, and the behaviours the script played.

    Examples
    --------
    >>> records, truth = generate_goalshift(seed=0, n_tasks_per_domain=2)
    >>> len(records), records[0]["benchmark"], records[0]["num_trials"]
    (36, 'agentchangebench', 3)
    """
    if n_tasks_per_domain < 1:
        raise ValueError(f"n_tasks_per_domain must be at least 1, got {n_tasks_per_domain}")
    records: list[dict[str, Any]] = []
    truth: dict[str, Any] = {"seed": seed, "episodes": {}}
    for d, domain in enumerate(DOMAINS):
        tasks = [_make_task(domain, t, np.random.default_rng(_seq(seed, d, t)))
                 for t in range(n_tasks_per_domain)]
        for m, (model, policy) in enumerate(AGENT_MODELS.items()):
            for t, task in enumerate(tasks):
                for trial in range(NUM_TRIALS):
                    ss = _seq(seed, d, t, m, trial, 1)
                    rng = np.random.default_rng(ss)
                    trial_seed = int(ss.generate_state(1, dtype=np.uint32)[0] % 1_000_001)
                    rec, info = _episode(task, model, policy, trial, rng, trial_seed,
                                         _seq(seed, d, t, m, trial, 2))
                    records.append(rec)
                    truth["episodes"][rec["episode_id"]] = info
    return records, truth


def _episode(task: Task, model: str, policy: AgentPolicy, trial: int,
             rng: np.random.Generator, trial_seed: int, id_seq: np.random.SeedSequence
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    script, shifts, termination, behaviours = _play(task, policy, rng)
    msgs = script.msgs
    # Which stored judge data this episode gets.
    judge_missing = rng.random() < 0.1
    source = "none" if judge_missing and not shifts else ("meta" if judge_missing else "judge")
    if source == "meta":
        for k, sh in enumerate(shifts):
            msgs[sh["turn"]]["event"] = "GOAL_SHIFT"
            msgs[sh["turn"]]["event_json"] = json.dumps(_meta_event(k, sh))
    elif source == "judge" and rng.random() < 0.08:
        # A stray agent-side tag: never a shift (only user messages count).
        behaviours.append("assistant_meta_tag")
        msgs[0]["event"] = "GOAL_SHIFT"
        msgs[0]["event_json"] = json.dumps({"event": "GOAL_SHIFT", "raw": "<meta>GOAL_SHIFT"
                                            "</meta>", "meta_error": "INVALID_META_FIELDS"})
    verdicts = None
    if task.nl_assertions and rng.random() >= policy.judge_fails:
        penalty = 0.25 * ("transfer" in behaviours or "stall" in behaviours)
        verdicts = [bool(rng.random() < policy.nl_met - penalty) for _ in task.nl_assertions]
    elif task.nl_assertions:
        behaviours.append("nl_judge_failed")
    details, tsr_truth = _stored_tsr(task, script, verdicts)
    reward = details["overall_tsr"]
    breakdown = {name: details[key] for name, key in
                 (("ACTION", "action"), ("NL_ASSERTION", "nl_assertion"),
                  ("COMMUNICATE", "communicate_info")) if details[key] is not None}
    nl_verdicts = None if verdicts is None else [
        {"assertion": a, "met": v, "justification": ("The transcript supports this." if v else
                                                      "The transcript does not show this.")}
        for a, v in zip(task.nl_assertions, verdicts, strict=True)]
    judge = judge_output(1, task.goals[0].token, [
        dict(sh, agent_responded=sh["agent_turn"] is not None and sh["agent_turn"] < len(msgs))
        for sh in shifts]) if source == "judge" else None
    for sh in (judge or {}).get("shifts", ()):
        if not sh["agent_responded"]:
            sh["agent_turn"] = None
    episode_id = f"agentchangebench/{_episode_uuid(id_seq)}"
    reward_info = {
        "reward": reward, "reward_basis": ["DB"], "reward_breakdown": breakdown,
        "nl_assertions": None if nl_verdicts is None else [
            {"nl_assertion": v["assertion"], "met": v["met"],
             "justification": v["justification"]} for v in nl_verdicts],
        "info": {"tsr_details": details, "gsrt_v2": judge},
    }
    n_msgs = len(msgs)
    rec = build_episode(
        msgs,
        benchmark="agentchangebench", domain=task.domain, task_id=task.task_id, task_set="new",
        scenario_id=f"agentchangebench/{task.domain}/new/{task.task_id}", rollout=trial,
        episode_id=episode_id, agent_model=model, method=METHOD, user_model=USER_MODEL,
        user_implementation=USER_IMPLEMENTATION, persona=task.persona, persona_text=PERSONA_TEXT[task.persona],
        source=f"accordkit.synth/goalshift/{task.domain}/{model}.json",
        config=task.domain, split="test",
        seed=trial_seed,
        instructions=task.instructions,
        goals=[g.token for g in task.goals], required_shifts=len(task.goals) - 1,
        num_trials=NUM_TRIALS,
        criteria=criteria(
            action_sets=[[g.action] + ([g.alt_action] if g.alt_action else [])
                         for g in task.goals],
            communicate_info=task.communicate, nl_assertions=task.nl_assertions or None),
        termination_reason=termination, reward=reward, reward_basis=["DB"],
        reward_breakdown_json=json.dumps(breakdown), nl_verdicts=nl_verdicts,
        tsr_details=details, gsrt_judge=judge, reward_info_json=json.dumps(reward_info),
        agent_cost=round(float(rng.uniform(0.0008, 0.0016)) * n_msgs, 6),
        user_cost=round(float(rng.uniform(0.0002, 0.0005)) * n_msgs, 6),
    )
    info = {
        "shift_source": source,
        "shifts": [{"shift_turn": sh["turn"], "from_goal": sh["from_goal"],
                    "to_goal": sh["to_goal"], "ack_turn": sh["ack_turn"],
                    "tool_turn": sh["tool_turn"], "outcome_turn": sh["outcome_turn"],
                    "transferred": sh["transferred"]} for sh in shifts],
        "redundant_calls": [list(x) for x in script.redundant],
        "n_tool_calls": len(script.calls),
        **tsr_truth,
        "behaviours": behaviours,
    }
    return rec, info
