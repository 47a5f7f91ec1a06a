"""Large synthetic AcCoRD sets written as parquet shards (``accordkit synth --episodes N``).

The same simulator and ground truth as the embedded sample, with as many distinct scenarios
as ``N`` needs: each scenario of a domain yields ``len(AGENT_MODELS) × len(METHODS) ×
N_ROLLOUTS`` episodes, and scenario ``i`` depends only on ``(seed, domain, i)``, so shard
``k`` is simulated on its own (in parallel processes) and the output is the same, byte for
byte, whatever the number of processes. The folder is a local dataset (a README with the
``data_files`` of each config), so ``ak.load``, ``accordkit score`` and Ray Data all read it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

__all__ = ["write_accord_shards", "EPISODES_PER_SCENARIO", "scenario_range"]

#: Rows per parquet row group (the unit the streaming engines read).
ROW_GROUP_SIZE = 10_000


def _episodes_per_scenario() -> int:
    from .accord import AGENT_MODELS, METHODS, N_ROLLOUTS

    return len(AGENT_MODELS) * len(METHODS) * N_ROLLOUTS


EPISODES_PER_SCENARIO = _episodes_per_scenario()


def _counters_before(domain: str, start: int) -> dict[str, int]:
    """Task-id counters as the simulator has them after ``start`` scenarios of ``domain``."""
    from . import accord

    if domain == "shop":
        keys = [t["category"] for t in accord._SHOP_TYPES]
    else:
        keys = [f[0] for f in accord._TRAVEL_FAMILIES]
    counters: dict[str, int] = {}
    period = len(keys)
    for offset, key in enumerate(keys):
        n = 0 if start <= offset else (start - offset + period - 1) // period
        counters[key] = counters.get(key, 0) + n
    return {k: v for k, v in counters.items() if v}


def scenario_range(seed: int, domain: str, start: int, stop: int) -> list:
    """Scenarios ``start`` .. ``stop - 1`` of ``domain``, as the simulator makes them.

    Identical to the same positions of a full run (tested), without simulating the others.
    """
    import numpy as np

    from . import accord

    counters = _counters_before(domain, start)
    make = accord._shop_scenario if domain == "shop" else accord._travel_scenario
    out = []
    for i in range(start, stop):
        rng = np.random.default_rng(np.random.SeedSequence([seed, accord.DOMAINS.index(domain),
                                                            i]))
        out.append(make(rng, i, counters))
    return out


def _shard(seed: int, domain: str, start: int, stop: int, path: str) -> tuple[str, int]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..schema import EPISODE_FEATURES
    from . import accord

    schema = EPISODE_FEATURES.arrow_schema
    writer = None
    n = 0
    # written beside its final name and renamed when complete: a reader (or a second run)
    # never sees half a shard; readers of a folder skip dot-files
    final = Path(path)
    tmp = final.with_name(f".tmp-{os.getpid()}-{final.name}")
    path = str(tmp)
    try:
        batch: list[dict] = []
        for i, scn in zip(range(start, stop), scenario_range(seed, domain, start, stop),
                          strict=True):
            for model in accord.AGENT_MODELS:
                for method in accord.METHODS:
                    for r in range(accord.N_ROLLOUTS):
                        rec, _ = accord._episode(scn, i, model, method, r, seed)
                        rec["source"] = f"accordkit.synth/accord-sharded/{domain}"
                        batch.append(rec)
            if len(batch) >= ROW_GROUP_SIZE:
                writer = writer or pq.ParquetWriter(path, schema, compression="zstd")
                writer.write_table(pa.Table.from_pylist(batch, schema=schema),
                                   row_group_size=ROW_GROUP_SIZE)
                n += len(batch)
                batch = []
        if batch or writer is None:
            writer = writer or pq.ParquetWriter(path, schema, compression="zstd")
            writer.write_table(pa.Table.from_pylist(batch, schema=schema),
                               row_group_size=ROW_GROUP_SIZE)
            n += len(batch)
    except BaseException:
        if writer is not None:
            writer.close()
            writer = None
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if writer is not None:
            writer.close()
    os.replace(tmp, final)
    return str(final), n


def _readme(configs: dict[str, list[str]], n_episodes: int, seed: int) -> str:
    lines = ["---", "configs:"]
    for name, files in configs.items():
        lines += [f"- config_name: {name}", "  data_files:", "  - split: test", "    path:"]
        lines += [f"    - {f}" for f in files]
    lines += ["tags:", "- accordkit", "---", "",
              "# accordkit synthetic AcCoRD set (sharded)", "",
              f"{n_episodes} episodes from accordkit's scripted simulator (seed {seed}), "
              "written by `accordkit synth --episodes N --shards S`. Canonical schema: see "
              "`docs/schema.md` in the accordkit repository.", ""]
    return "\n".join(lines)


def write_accord_shards(out: str | Path, *, episodes: int, shards: int, seed: int = 0,
                        num_proc: int = 1, domains: Iterable[str] = ("shop", "travel"),
                        progress: bool | None = None) -> list[Path]:
    """Simulate about ``episodes`` AcCoRD episodes into ``shards`` parquet files.

    Parameters
    ----------
    out : str or Path
        Folder to write (``<domain>/test-0000k-of-0000S.parquet`` and ``README.md``).
    episodes : int
        Episodes wanted; rounded up to whole scenarios (12 episodes each) and split evenly
        between the domains.
    shards : int
        Parquet files in all (at least one per domain).
    seed : int
        Simulator seed; the same seed gives the same files.
    num_proc : int
        Processes simulating shards in parallel (does not change the output).
    progress : bool, optional
        Show a progress bar of the shards written (on stderr); by default only when
        stderr is a terminal.

    Returns
    -------
    list of Path
        The shards and the README.
    """
    domains = tuple(domains)
    if episodes < 1 or shards < 1:
        raise ValueError("episodes and shards must be positive")
    per_domain_scn = math.ceil(episodes / EPISODES_PER_SCENARIO / len(domains))
    per_domain_shards = max(1, math.ceil(shards / len(domains)))
    out = Path(out)
    jobs = []
    configs: dict[str, list[str]] = {}
    for domain in domains:
        (out / domain).mkdir(parents=True, exist_ok=True)
        bounds = [round(k * per_domain_scn / per_domain_shards)
                  for k in range(per_domain_shards + 1)]
        configs[domain] = []
        for k in range(per_domain_shards):
            name = f"{domain}/test-{k:05d}-of-{per_domain_shards:05d}.parquet"
            configs[domain].append(name)
            jobs.append((seed, domain, bounds[k], bounds[k + 1], str(out / name)))
    from tqdm import tqdm

    bar = tqdm(total=len(jobs), desc="synth", unit="shard",
               disable=None if progress is None else not progress)
    with bar:
        if num_proc <= 1:
            results = []
            for job in jobs:
                results.append(_shard(*job))
                bar.update(1)
        else:
            import multiprocessing as mp

            with ProcessPoolExecutor(max_workers=num_proc,
                                     mp_context=mp.get_context("spawn")) as pool:
                results = []
                for result in pool.map(_shard, *zip(*jobs, strict=True)):
                    results.append(result)
                    bar.update(1)
    total = sum(n for _, n in results)
    readme = out / "README.md"
    readme.write_text(_readme(configs, total, seed), encoding="utf-8")
    return [Path(p) for p, _ in results] + [readme]
