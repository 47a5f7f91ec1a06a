"""Judge runner throughput against the stand-in server, and the sample judged end to end.

Part 1 (the issue's target): 1,000 judge calls (``gsrt`` on 1,000 distinct episodes)
against the stub with 200 ms latency at concurrency 16. Ideal time: 1000 / 16 x 0.2 s =
12.5 s; target: within 1.3x (16.25 s). A second run over the same episodes must make 0 calls.
The stub runs in its own process so its threads do not compete with the runner for the GIL.

Part 2: the AcCoRD sample (``data/sample/accord``) judged with ``usersim_tests`` through an
in-process stub serving the two stand-in models, checked item for item against
``make_sample_verdicts``, then the Table 6 analog and the agreement table built from the
stored verdicts.

Run: ``HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/judge_throughput.py``
(results go to ``benchmarks/results/judge_throughput.md`` by hand).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

N_CALLS = 1000
LATENCY = 0.2
CONCURRENCY = 16
IDEAL = N_CALLS / CONCURRENCY * LATENCY
REPLY = json.dumps({"start_goal": {"turn": 1, "goal": "cards"}, "user_goal_shifts": []})


def episodes(n: int) -> list[dict]:
    from accordkit.schema import empty_episode

    out = []
    for i in range(n):
        rec = empty_episode()
        rec.update({"benchmark": "agentchangebench", "domain": "banking",
                    "episode_id": f"agentchangebench/bench-{i}", "goals": ["cards", "dispute"],
                    "required_shifts": 1, "messages": [
                        {"role": "assistant", "content": "Hi! How can I help?", "turn_idx": 0},
                        {"role": "user", "content": f"Please lock card number {i}.",
                         "turn_idx": 1},
                        {"role": "assistant", "content": "Done. Anything else?", "turn_idx": 2},
                        {"role": "user", "content": "I also need to dispute a charge.",
                         "turn_idx": 3}]})
        out.append(rec)
    return out


def part1() -> dict:
    from accordkit.judges import run_judge

    server = subprocess.Popen(
        [sys.executable, str(REPO / "tests" / "judges" / "stub_server.py"),
         "--latency", str(LATENCY), "--answer", REPLY],
        stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip()
    eps = episodes(N_CALLS)
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-dummy")
    try:
        with tempfile.TemporaryDirectory() as cache:
            opts = {"judge": "gsrt", "model": "openai/stub-judge", "api_base": base,
                    "concurrency": CONCURRENCY, "cache_dir": cache, "price_in": 0.15,
                    "price_out": 0.6, "progress": False}
            run_judge(episodes(8), **{**opts, "cache_dir": Path(cache) / "warm-up"})
            t = time.perf_counter()
            first = run_judge(eps, **opts)
            t1 = time.perf_counter() - t
            t = time.perf_counter()
            second = run_judge(eps, **opts)
            t2 = time.perf_counter() - t
    finally:
        server.kill()
    return {"first_s": t1, "ratio": t1 / IDEAL, "first_calls": first.n_calls,
            "first_errors": first.n_errors, "second_s": t2, "second_calls": second.n_calls,
            "second_cached": second.n_cached}


def part2() -> dict:
    import pandas as pd

    import accordkit as ak
    from accordkit.judges import (
        agreement,
        pass_rates,
        read_verdicts,
        run_judge,
        usersim,
        write_verdicts,
    )
    from accordkit.judges.standin import make_sample_verdicts, standin_answers, standin_reply
    from tests.judges.stub_server import StubServer, last_user_text

    ds = ak.load(REPO / "data" / "sample" / "accord")
    eps = ds.to_list()
    replies = {}
    for ep in eps:
        answers = {m: standin_answers(ep, f"standin/{m}", seed=0) for m in ("judge-a", "judge-b")}
        for call in usersim.build(ep):
            turn = call.items[0].turn_idx
            for m in answers:
                replies[(m, call.messages[1][1])] = standin_reply(answers[m][turn])
    server = StubServer(answer=lambda body: replies[(body["model"], last_user_text(body))])
    server.start()
    frames, times = [], {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for m in ("judge-a", "judge-b"):
                t = time.perf_counter()
                run = run_judge(ds, judge="usersim_tests", model=f"openai/{m}",
                                api_base=server.base_url, cache_dir=Path(tmp) / "cache",
                                concurrency=CONCURRENCY, price_in=0.15, price_out=0.6,
                                progress=False)
                times[m] = (time.perf_counter() - t, run.n_calls, run.exit_code, run.cost_usd)
                frames.append(run.verdicts)
            path = write_verdicts(pd.concat(frames, ignore_index=True), Path(tmp) / "v.parquet")
            v = read_verdicts(path)
    finally:
        server.stop()
    key = ["judge_model", "episode_id", "turn_idx", "item"]
    got = v.assign(judge_model="standin/" + v["judge_model"].str.removeprefix("openai/"))
    exp = make_sample_verdicts(ds, seed=0)
    same = (got.sort_values(key)["verdict"].to_numpy()
            == exp.sort_values(key)["verdict"].to_numpy()).all()
    domains = ak.to_frame(ds)[["episode_id", "domain"]]
    table6 = pass_rates(v.merge(domains, on="episode_id"), by=["domain", "judge_model"])
    agree = agreement(v, "openai/judge-a", "openai/judge-b")
    return {"times": times, "n_rows": len(v), "same_as_standin": bool(same), "table6": table6,
            "agreement": agree}


def markdown(frame) -> str:
    """A DataFrame as a Markdown table (no tabulate dependency)."""
    frame = frame.reset_index() if frame.index.name or frame.index.names[0] else frame
    cols = [" / ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(f"{x:.3f}" if isinstance(x, float) else str(x)
                                       for x in row) + " |")
    return "\n".join(lines)


def main() -> None:
    r1 = part1()
    print(f"part 1: {N_CALLS} calls, latency {LATENCY}s, concurrency {CONCURRENCY}: "
          f"{r1['first_s']:.2f} s (ideal {IDEAL:.1f} s, ratio {r1['ratio']:.3f}); "
          f"calls {r1['first_calls']}, errors {r1['first_errors']}")
    print(f"        second run: {r1['second_s']:.2f} s, calls {r1['second_calls']}, "
          f"from cache {r1['second_cached']}")
    r2 = part2()
    for m, (t, n, code, cost) in r2["times"].items():
        print(f"part 2: {m}: {n} calls in {t:.1f} s, exit {code}, cost ${cost:.4f}")
    print(f"        {r2['n_rows']} verdict rows; identical to make_sample_verdicts: "
          f"{r2['same_as_standin']}")
    t6 = r2["table6"].pivot_table(index="item", columns=["domain", "judge_model"],
                                  values="pass_rate")
    print(markdown(t6))
    print(markdown(r2["agreement"]))


if __name__ == "__main__":
    main()
