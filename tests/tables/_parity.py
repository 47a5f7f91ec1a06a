"""Compute the sample report tables the parity test pins (see test_parity.py).

Run ``python -m tests.tables._parity`` once to regenerate ``parity_sample.json``; only do
that when a change of numbers is intended and explained.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

EXPECTED = Path(__file__).with_name("parity_sample.json")
SAMPLE = Path(__file__).resolve().parents[2] / "data" / "sample"
BOOT = {"cluster": "scenario_id", "method": "bca", "confidence": 0.95, "n_resamples": 400,
        "seed": 0}
VALUES = ("estimate", "ci_low", "ci_high", "n_clusters", "n_rows", "n_events")


def _records(frame: pd.DataFrame, keys: list[str]) -> dict[str, dict[str, float | None]]:
    out = {}
    for _, row in frame.iterrows():
        label = " | ".join(str(row[k]) for k in keys)
        out[label] = {v: (None if pd.isna(row[v]) else float(row[v]))
                      for v in VALUES if v in frame.columns}
    return out


def compute() -> dict[str, dict]:
    """Every number of the sample's AcCoRD and goal-shift report tables."""
    import warnings

    import accordkit as ak
    from accordkit import tables as views

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        acc = ak.load(SAMPLE / "accord")
        gs = ak.load(SAMPLE / "goalshift")
        ep = ak.score(acc)
        pr = ak.score(acc, level="preference")
        gep = ak.score(gs)
        gsh = ak.score(gs, level="shift")
        group = ["agent_model", "method"]
        ggroup = ["domain", "agent_model"]
        tables = {
            "accord_main": (views.accord_main(ep, by=group, **BOOT), [*group, "metric"]),
            "accord_main_domain": (views.accord_main(ep, by=["domain", *group], **BOOT),
                                   ["domain", *group, "metric"]),
            "accord_dynamics": (views.accord_dynamics(pr, by=group, **BOOT),
                                [*group, "dynamic", "metric"]),
            "accord_cost": (views.accord_cost(ep, by=group, **BOOT), [*group, "metric"]),
            "goalshift_main": (views.goalshift_main(gep, by=ggroup, **BOOT),
                               [*ggroup, "metric"]),
            "goalshift_gsrt": (views.goalshift_gsrt(gsh, by=ggroup, median="observed", **BOOT),
                               [*ggroup, "metric"]),
            "accord_table": (ak.accord_table(ep, preferences=pr, by=tuple(group)),
                             [*group, "metric"]),
        }
    return {name: _records(frame, keys) for name, (frame, keys) in tables.items()}


def same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


if __name__ == "__main__":
    EXPECTED.write_text(json.dumps(compute(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {EXPECTED}")
