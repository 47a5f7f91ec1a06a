"""Synthetic clustered score frames for the statistics tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


def clustered_frame(
    n_scenarios: int = 30,
    n_rollouts: int = 3,
    *,
    seed: int = 0,
    models: tuple[str, ...] = ("a",),
    effect: dict[str, float] | None = None,
) -> pd.DataFrame:
    """Bernoulli ``success`` and Poisson ``turns`` with a shared per-scenario difficulty.

    Columns: agent_model, scenario_id ("s000"...), domain ("x"/"y" alternating by
    scenario), rollout, success (float 0/1), outcome (success-dependent, NaN when not
    completed), n_num / n_den (a ratio), turns (Poisson).
    """
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 2, n_scenarios)
    effect = effect or {}
    parts = []
    for model in models:
        p_m = np.clip(np.repeat(p, n_rollouts) + effect.get(model, 0.0), 0, 1)
        n = n_scenarios * n_rollouts
        success = (rng.random(n) < p_m).astype(float)
        completed = rng.random(n) < 0.8
        outcome = np.where(completed, success * rng.uniform(0.5, 1.0, n), np.nan)
        den = rng.poisson(3, n)
        parts.append(pd.DataFrame({
            "agent_model": model,
            "scenario_id": np.repeat([f"s{i:03d}" for i in range(n_scenarios)], n_rollouts),
            "domain": np.repeat(np.where(np.arange(n_scenarios) % 2 == 0, "x", "y"), n_rollouts),
            "rollout": np.tile(np.arange(n_rollouts), n_scenarios),
            "success": success,
            "outcome": outcome,
            "n_num": rng.binomial(den, 0.3).astype(float),
            "n_den": den.astype(float),
            "turns": rng.poisson(4 + 3 * np.repeat(p, n_rollouts)).astype(float),
        }))
    return pd.concat(parts, ignore_index=True)
