"""Every number docs/statistics.md quotes has a source, and matches it (issue 32).

A number in the prose (code spans and blocks are left aside: formulas and calls) is either
a **claim**, checked here against where it comes from (a recorded benchmark in
``benchmarks/results``, a doctest, a constant of the code, or the sample data computed
again), or a **definition** (a citation, an illustration, a formula's constant, a
default), listed with why it needs no source. A number in neither list fails the test, so
a new number cannot be written into the page without saying where it comes from.
"""

from __future__ import annotations

import inspect
import math
import re
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "statistics.md"
RESULTS = REPO / "benchmarks" / "results"
SAMPLE = REPO / "data" / "sample"

NUMBER = re.compile(r"(?<![\w.^/])\d+(?:,\d{3})*(?:\.\d+)?(?:e-\d+)?")


def _prose() -> str:
    """The page with fenced blocks and inline code blanked out (offsets kept)."""
    text = DOC.read_text(encoding="utf-8")
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    text = re.sub(r"```.*?```", blank, text, flags=re.S)
    return re.sub(r"`[^`\n]*`", blank, text)


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _result(name: str) -> str:
    return (RESULTS / name).read_text(encoding="utf-8")


# --------------------------------------------------------------------------- sources


def _coverage_case_truth(case: str) -> float:
    row = re.search(rf"^\| {re.escape(case)} \|.*\| ([\d.]+) \|$", _result("stats_coverage.md"),
                    flags=re.M)
    return float(row.group(1))


def _speed() -> tuple[float, float]:
    text = _result("stats_speed.md")
    wall = re.search(r"accordkit `summarize` \(whole table, one call\) \| ([\d.]+) \|", text)
    ratio = re.search(r"ratio scipy / accordkit \| ([\d.]+)x \|", text)
    return float(wall.group(1)), float(ratio.group(1))


def _power_summary() -> dict[str, float]:
    text = _result("reliability_power.md")
    planner = re.search(r"- planner: (\d+) of (\d+) designs within 5 points.*?= ([\d.]+) points",
                        text)
    grid = re.search(r"- planner: (\d+) of (\d+) within 5 points; largest \|predicted - "
                     r"simulated\| ([\d.]+) points", text)
    normal = re.search(r"- normal theory at the same effects: (\d+) of (\d+) within 5 points; "
                       r"from ([-+][\d.]+) to ([-+][\d.]+) points", text)
    mdd = re.search(r"- mdd: model error from ([-+][\d.]+) % to ([-+][\d.]+) %", text)
    return {"planner_ok": int(planner.group(1)), "planner_n": int(planner.group(2)),
            "planner_max": float(planner.group(3)), "grid_ok": int(grid.group(1)),
            "grid_n": int(grid.group(2)), "grid_max": float(grid.group(3)),
            "normal_min": float(normal.group(3)), "normal_max": float(normal.group(4)),
            "mdd_lo": float(mdd.group(1)), "mdd_hi": float(mdd.group(2))}


def _km_benchmark() -> pd.DataFrame:
    rows = [line.split("|")[1:-1] for line in _result("reliability_km.md").splitlines()
            if re.match(r"^\| [a-z].* \| \d+ x \d+ \|", line)]
    frame = pd.DataFrame([[c.strip() for c in r] for r in rows])
    return pd.DataFrame({
        "censored": frame[2].str.rstrip(" %").astype(float),
        "ratio": frame[6].str.replace(" ✓", "").str.replace(" ✗", "").astype(float),
        "observed_bias": frame[5].astype(float),
        "truth": frame[3].astype(float),
        "coverage": frame[8].str.replace(r" %.*", "", regex=True).astype(float),
    })


@pytest.fixture(scope="module")
def sample_scores():
    if not (SAMPLE / "goalshift").exists():
        pytest.skip("data/sample has not been generated (run `make sample`)")
    import accordkit as ak

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = ak.load(SAMPLE / "goalshift", cache=False)
        return ak.score(ds), ak.score(ds, level="shift")


def _six_mp() -> pd.DataFrame:
    from .test_survival import _six_mp as six

    time, observed = six()
    return pd.DataFrame({"time": time, "observed": observed.astype(float)})


# --------------------------------------------------------------------------- claims


def check_design_effect(m: re.Match) -> None:
    rollouts, icc = 3, 1 / 3
    assert float(m.group("three")) == round(1 + (rollouts - 1) * icc, 2)
    assert float(m.group("eight")) == round(1 + (8 - 1) * icc, 2)


def check_speed(m: re.Match) -> None:
    wall, ratio = _speed()
    assert (float(m.group("wall")), float(m.group("ratio"))) == (wall, ratio)
    assert wall < 2.0


def check_cache_block(m: re.Match) -> None:
    from accordkit.stats._resample import CACHE_ELEMENTS

    assert int(m.group("kb")) == CACHE_ELEMENTS * 8 // 1024


def check_tie(m: re.Match) -> None:
    from accordkit.stats._intervals import TIE_RTOL

    assert float(m.group("tol")) == TIE_RTOL


def check_jackknife_cap(m: re.Match) -> None:
    from accordkit.stats._estimators import DENSE_JACKKNIFE_MAX_CLUSTERS

    assert _num(m.group("cap")) == DENSE_JACKKNIFE_MAX_CLUSTERS


def check_jackknife_memory(m: re.Match) -> None:
    assert int(m.group("gb")) == round(_num(m.group("clusters")) ** 2 * 8 / 2**30)


def check_million(m: re.Match) -> None:
    scale = _result("scale.md")
    assert f"{m.group('clusters')} clusters" in scale
    assert _num(m.group("resamples")) == inspect.signature(
        __import__("accordkit").stats.summarize).parameters["n_resamples"].default


def check_exact_parts(m: re.Match) -> None:
    from accordkit.stats import _bootstrap

    assert f"2.0**-{m.group('bits')}" in inspect.getsource(_bootstrap.exact_parts)


def check_shared_tolerance(m: re.Match) -> None:
    source = (REPO / "tests" / "stats" / "test_bootstrap.py").read_text(encoding="utf-8")
    resamples = int(_num(m.group("resamples")))
    assert f"n_resamples={resamples}" in source
    assert f"<= {int(m.group('pct')) / 100} * width" in source


def check_tables_tolerance(m: re.Match) -> None:
    source = (REPO / "tests" / "stats" / "test_summarize_tables.py").read_text(encoding="utf-8")
    assert f"n_resamples={int(_num(m.group('resamples')))}" in source
    assert f"{int(m.group('pct')) / 100} * width" in source


def check_small_cell(m: re.Match) -> None:
    from accordkit.stats.summarize import SMALL_CLUSTERS, SMALL_EVENTS

    assert int(m.group("clusters")) == SMALL_CLUSTERS and int(m.group("events")) == SMALL_EVENTS


def check_caption(m: re.Match) -> None:
    from accordkit.stats import summarize
    from accordkit.tables import interval_caption

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"scenario_id": np.repeat(np.arange(30), 2), "y": rng.random(60)})
    caption = interval_caption(summarize(frame, "y"))
    assert caption.startswith(m.group("caption").replace("\n> ", " "))


def check_noise_defaults(m: re.Match) -> None:
    from accordkit.stats import noise_floor

    params = inspect.signature(noise_floor).parameters
    assert float(m.group("power")) == params["power"].default
    assert float(m.group("alpha")) == params["alpha"].default


def check_planner_defaults(m: re.Match) -> None:
    from accordkit.stats import plan_trials

    trials = inspect.signature(plan_trials).parameters["trials"].default
    assert (min(trials), max(trials)) == (int(m.group("lo")), int(m.group("hi")))


def check_noise_sample(m: re.Match, sample_scores) -> None:
    from accordkit.stats import noise_floor

    episodes, _ = sample_scores
    table = noise_floor(episodes, by="agent_model").set_index("agent_model")
    a, p = table.loc["sim-attentive"], table.loc["sim-persistent"]
    assert int(m.group("tasks")) == a.n_tasks and int(m.group("trials")) == a.trials_per_task
    assert float(m.group("a_mean")) == round(a["mean"], 3)
    assert float(m.group("a_icc")) == round(a.icc, 2)
    assert float(m.group("a_flip")) == round(a.flip_rate, 2)
    assert float(m.group("a_mdd")) == round(a.mdd, 3)
    assert float(m.group("p_mean")) == round(p["mean"], 3)
    assert float(m.group("p_icc")) == round(p.icc, 2)
    assert float(m.group("p_mdd")) == round(p.mdd, 3)
    points = sorted(round(100 * v) for v in (a.mdd, p.mdd))
    assert (int(m.group("lo")), int(m.group("hi"))) == tuple(points)


def check_power_benchmark(m: re.Match) -> None:
    s = _power_summary()
    assert (int(m.group("ok")), int(m.group("n"))) == (s["planner_ok"], s["planner_n"])
    assert float(m.group("max")) == s["planner_max"]
    assert (int(m.group("grid_n")), float(m.group("grid_max"))) == (s["grid_n"], s["grid_max"])
    assert s["grid_ok"] == s["grid_n"]
    assert float(m.group("normal")) == max(abs(s["normal_min"]), abs(s["normal_max"]))
    worst = max(abs(s["mdd_lo"]), abs(s["mdd_hi"]))
    assert worst <= float(m.group("mdd"))
    assert worst > float(m.group("mdd")) - 1  # the bound is the recorded one, rounded up


def check_power_draws(m: re.Match) -> None:
    from accordkit.stats import _power

    assert (_num(m.group("sims")), int(m.group("tasks"))) == (_power.N_SIM, _power.EXACT_TASKS)


def check_six_mp(m: re.Match) -> None:
    """lifelines' interval and ours on 6-MP; the old one (resamples not reached dropped)
    from the same resamples."""
    from accordkit.stats import Metric, summarize
    from accordkit.stats._km import KMMedianEstimator
    from accordkit.stats._resample import cell_rng, count_chunks

    frame = _six_mp()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        row = summarize(frame, Metric("km", ("time", "observed"), stat="km_median"),
                        cluster=None, method="percentile").iloc[0]
    assert (row.ci_low, row.ci_high) == (float(m.group("low")), np.inf)
    n = len(frame)
    est = KMMedianEstimator(frame["time"].to_numpy(), frame["observed"].to_numpy(),
                            np.arange(n), n)
    theta = np.concatenate([est.on_counts(c) for c in count_chunks(
        [(cell_rng(0, ()), np.arange(n))], n, 10_000)])
    assert round(100 * np.mean(np.isinf(theta))) == int(m.group("pct"))
    dropped = np.quantile(theta[np.isfinite(theta)], [0.025, 0.975])
    assert (dropped[0], dropped[1]) == (float(m.group("old_low")), float(m.group("old_high")))


def check_km_sample(m: re.Match, sample_scores) -> None:
    from accordkit.stats.survival import recovery_times

    _, shifts = sample_scores
    ack = recovery_times(shifts, event="ack")
    assert (int(m.group("shifts")), int(m.group("judged"))) == (len(shifts), len(ack))
    assert int(m.group("censored")) == int((~ack["observed"]).sum())
    assert int(m.group("meta")) == ack.attrs["n_unjudged"]


_KM_TABLE: dict[str, dict] = {}


def km_table(sample_scores) -> dict[tuple[str, str, str], str]:
    """The KM and observed-only medians of the sample, as the page's table writes them."""
    if "table" in _KM_TABLE:
        return _KM_TABLE["table"]
    from accordkit.stats import km_medians

    _, shifts = sample_scores
    names = {"ack": "acknowledgement", "tool": "first relevant tool", "outcome": "outcome"}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for by in (None, "domain", "agent_model"):
            res = km_medians(shifts, by=by)
            for _, r in res.iterrows():
                group = "all" if by is None else r[by]
                cell = f"{r.estimate:g} [{r.ci_low:g}, {r.ci_high:g}]"
                out[(group, names[r.event], r.stat)] = cell
    _KM_TABLE["table"] = out
    return out


def check_km_rows(m: re.Match, sample_scores) -> None:
    table = km_table(sample_scores)
    for line in m.group(0).strip().splitlines()[2:]:
        group, event, km, observed = (c.strip() for c in line.strip("|").split("|"))
        assert table[(group, event, "km_median")] == km, line
        assert table[(group, event, "median")] == observed, line


def check_km_ack(m: re.Match, sample_scores) -> None:
    assert km_table(sample_scores)[("all", "acknowledgement", "median")] == "1 [1, 1]"


def check_km_models(m: re.Match, sample_scores) -> None:
    table = km_table(sample_scores)
    for model, values in (("sim-attentive", m.group("a")), ("sim-persistent", m.group("p"))):
        want = [table[(model, e, "km_median")].split(" ")[0]
                for e in ("acknowledgement", "first relevant tool", "outcome")]
        assert values.split(" / ") == want


def check_km_benchmark(m: re.Match) -> None:
    km = _km_benchmark()
    assert (int(m.group("c_lo")), int(m.group("c_hi"))) == (round(km.censored.min()),
                                                           round(km.censored.max()))
    assert int(m.group("bias")) == math.ceil(100 * km.ratio.max())
    under = -km.observed_bias / km.truth * 100
    assert int(m.group("u_lo")) == 10 * math.floor(under.min() / 10)
    assert int(m.group("u_hi")) == 10 * math.ceil(under.max() / 10)
    assert (float(m.group("cov_lo")), float(m.group("cov_hi"))) == (km.coverage.min(),
                                                                    km.coverage.max())
    assert f"{m.group('reps')} simulated data sets per case" in _result("reliability_km.md")


def _judge_summary() -> dict[str, tuple[float, int, int]]:
    """interval -> (lowest coverage %, cases at or above 93 %, cases) of the judge benchmark."""
    rows = re.findall(r"^\| ([a-z_ ()]+) \| ([\d.]+)% \| (\d+) of (\d+) \|$",
                      _result("judge_correction.md"), flags=re.M)
    return {name: (float(low), int(ok), int(n)) for name, low, ok, n in rows}


def check_judge_coverage(m: re.Match) -> None:
    s = _judge_summary()
    low, ok, n = s["corrected_rate (clusters)"]
    assert (float(m.group("cr")), int(m.group("cases"))) == (low, n) and ok == n
    low, ok, n = s["ppi_mean (clusters)"]
    assert (float(m.group("ppi")), int(m.group("ppi_ok"))) == (low, ok)
    assert int(m.group("t")) == 93
    assert float(m.group("ppi_iid")) == s["ppi_mean (iid)"][0]
    assert float(m.group("raw")) == s["raw"][0]
    text = _result("judge_correction.md")
    assert f"{m.group('reps')} simulated data sets per case" in text
    assert f"repetitions: about {m.group('mc')} percentage points" in text
    assert float(m.group("ppi")) >= 95 - 2 * float(m.group("mc"))  # "within the error"


#: the coverage sentence of the judge section (spaces match any white space)
JUDGE_COVERAGE = (
    r"Over the (?P<cases>\d+) cases \((?P<reps>\d+) data sets each\), the corrected rate's "
    r"interval covers the truth in at least (?P<cr>[\d.]+) % of the data sets in every case, "
    r"and the PPI mean's in at least (?P<t>93) % in (?P<ppi_ok>\d+) of them \(lowest "
    r"(?P<ppi>[\d.]+) %, within the Monte-Carlo error of about (?P<mc>[\d.]+) points\); the "
    r"PPI interval that ignores the scenarios falls to (?P<ppi_iid>[\d.]+) %, and the raw "
    r"judged rate's own interval to (?P<raw>[\d.]+) %").replace(" ", r"\s+")


Check = Callable[..., None]
#: (pattern over the prose, check): every number inside a match is accounted for
CLAIMS: list[tuple[str, Check]] = [
    (r"With (?P<r>3) rollouts and an ICC of (?P<i>1)/3 the variance is 1 \+ 2/3 = (?P<three>[\d.]+) "
     r"times as large, not twice;\s+with (?P<e>8) rollouts it is "
     r"1 \+ 7/3 = (?P<eight>[\d.]+) times", check_design_effect),
    (r"(?P<w>10) metrics × (?P<g>12) groups\s+with (?P<s>300) scenarios × (?P<r>8) rollouts and "
     r"(?P<b>10,000) resamples takes (?P<wall>[\d.]+) s against a (?P<t>2)-second target,\s+"
     r"(?P<ratio>[\d.]+) times faster", check_speed),
    (r"blocks of about (?P<kb>\d+) kB", check_cache_block),
    (r"relative (?P<tol>1e-12)", check_tie),
    (r"within (?P<tol>1e-12)\s+of zero", check_tie),
    (r"above (?P<cap>5,000) clusters", check_jackknife_cap),
    (r"\(at (?P<clusters>83,334) clusters\s+the jackknife alone would need (?P<gb>\d+) GB\)",
     check_jackknife_memory),
    (r"a million\s+episodes \((?P<clusters>83,334) scenarios\) that is (?P<resamples>10,000) ×"
     r" 83,334 draws", check_million),
    (r"at most (?P<bits>26) significant bits", check_exact_parts),
    (r"at (?P<resamples>4,000) resamples: every\s+end within (?P<pct>\d+) % of the interval's "
     r"width", check_shared_tolerance),
    (r"every end within (?P<pct>\d+) % of the\s+width at (?P<resamples>4,000) resamples",
     check_tables_tolerance),
    (r"On the sample \(\s+, (?P<tasks>\d+) tasks × (?P<trials>\d+) trials\): sim-attentive has "
     r"mean (?P<a_mean>[\d.]+), icc (?P<a_icc>[\d.]+),\s+flip rate (?P<a_flip>[\d.]+) and mdd "
     r"(?P<a_mdd>[\d.]+); sim-persistent (?P<p_mean>[\d.]+), icc (?P<p_icc>[\d.]+), mdd "
     r"(?P<p_mdd>[\d.]+)\. A difference\s+between two configurations of this size needs to "
     r"exceed about (?P<lo>\d+) to (?P<hi>\d+) points", "noise"),
    (r"fewer than (?P<clusters>10) contributing clusters, or fewer than\s+(?P<events>10) events",
     check_small_cell),
    (r"flags groups of\s+fewer than (?P<clusters>10) tasks", lambda m: check_small_cell(
        re.match(r"(?P<clusters>10) (?P<events>10)", f"{m.group('clusters')} 10"))),
    (r"> (?P<caption>Estimate \[95% BCa confidence interval\] \(10,000 bootstrap resamples, "
     r"clusters:\n> scenario_id, seed 0\)\.)", check_caption),
    (r"power (?P<power>0\.8) at α = (?P<alpha>0\.05)", check_noise_defaults),
    (r"\(default (?P<lo>1)–(?P<hi>10)\)", check_planner_defaults),
    (r"the predicted power is within (?P<five>5) points of the simulated\s+power in (?P<ok>\d+) "
     r"of (?P<n>\d+) designs \(largest (?P<max>[\d.]+) points\), and at every one of the "
     r"(?P<grid_n>\d+)\s+designs of a grid \(ICC (?P<i0>0\.05)–(?P<i1>0\.8), (?P<t0>1)–(?P<t1>16) "
     r"trials, (?P<k0>10)–(?P<k1>200) tasks,\s+at each design's minimum detectable difference\) "
     r"within (?P<grid_max>[\d.]+) points, where the non-central t\s+of normal theory, the "
     r"planner's model before, missed by up to (?P<normal>[\d.]+) points\. The minimum\s+"
     r"detectable difference of\s+is within (?P<mdd>\d+) % of the simulated one at four",
     check_power_benchmark),
    (r"\((?P<sims>20,000) data sets; up to (?P<tasks>100) tasks each task's", check_power_draws),
    (r"by more than the (?P<five>5) points the benchmark below allows", None),  # target
    (r"on the (?P<six>6)-MP remission data \(Freireich et al\. (?P<year>1963), one patient per "
     r"cluster\) (?P<pct>\d+) % of\s+the resamples do not reach the median, and the interval is "
     r"\[(?P<low>\d+), not reached\], as lifelines\s+gives it, not \[(?P<old_low>\d+), "
     r"(?P<old_high>\d+)\]", check_six_mp),
    (r"\(\s+, (?P<shifts>\d+) shifts: (?P<judged>\d+) judged, of which "
     r"(?P<censored>\d+) were never\s+acknowledged and are censored, plus (?P<meta>\d+) "
     r"meta-marker shifts\), with (?P<conf>95) % percentile intervals", "sample"),
    (r"\| group \| event \| KM median \| observed-only median \|\n(?:\|.*\|\n)+", "km_rows"),
    (r"sim-attentive (?P<a>\d+ / \d+ / \d+), sim-persistent\s+(?P<p>\d+ / \d+ / \d+) messages",
     "km_models"),
    (r"interval for acknowledgement \(\[1, 1\]\)", "km_rows_ack"),
    (r"shared task frailty, (?P<c_lo>\d+)–(?P<c_hi>\d+) %\s+censored\): the KM median's bias is "
     r"at most (?P<bias>\d+) % of the observed-only median's \(which\s+underestimates the true "
     r"median by (?P<u_lo>\d+)–(?P<u_hi>\d+) %\), and the (?P<conf>95) % cluster-bootstrap "
     r"percentile\s+interval covers the true median in (?P<cov_lo>[\d.]+)–(?P<cov_hi>[\d.]+) % "
     r"of (?P<reps>\d+) data sets", check_km_benchmark),
    (JUDGE_COVERAGE, check_judge_coverage),
    (r"Near a ceiling of (?P<c>0\.95)", lambda m: (
        pytest.approx(_coverage_case_truth("ceiling")) == float(m.group("c")))),
]

#: (pattern, why it needs no source)
DEFINITIONS: list[tuple[str, str]] = [
    (r"Efron & Tibshirani 1993, ch\. 14", "citation"),
    (r"Freireich et al\. 1963", "citation"),
    (r"Angelopoulos et al\.,\s+Science 2023", "citation"),
    (r"\[0, 1\]", "the range of a rate"),
    (r"sensitivity \+ specificity ≤ 1", "the definition of a judge no better than a coin"),
    (r"6-MP", "the data set's name"),
    (r"rates near 0 or 1|near 0 or 1|beyond 0 or 1|between 0 and 1", "the range of a rate"),
    (r"of exactly 1 in a cell", "illustration: a constant success rate"),
    (r"an episode with 20\s+calls weighs more than one with 2", "illustration"),
    (r"Two goal shifts spread over 26 scenarios", "illustration"),
    (r"over 40 shared scenarios.*?only 4 of them", "illustration"),
    (r"0\.5 means no tendency, 0\.7 means\s+the candidate wins on 70% of scenarios",
     "illustration"),
    (r"^\d\. ", "list numbering"),
    (r"group [12]\b", "tie group numbers"),
    (r"Table [34]\b", "the paper's table names"),
    (r"95 ?%", "the nominal level of the intervals"),
    (r"MSB = Σ nᵢ \(task meanᵢ − mean\)² / \(k − 1\)", "formula"),
    (r"n0 = \(N − Σ nᵢ² / N\) / \(k − 1\)", "formula"),
    (r"truncated at 0", "definition"),
    (r"≥ 2\s+trials", "definition of the flip rate"),
    (r"toward 1 below a 50 % rate, toward 0 above", "definition of the logit shift"),
    (r"\(2 var_within / m per task", "formula"),
    (r"survival ≤ 0\.5", "definition of the median"),
    (r"\(2m \+ 1 values for m trials", "formula"),
    (r"θ ~ N\(0, 1\), log a ~ N\(0, 1\), b ~ N\(0, 9\)", "the IRT model's priors"),
    (r"\(rate ≥\s+, default 1\)", "a default of task_discrimination"),
    (r"never 0\.", "the p-value's add-one correction"),
    (r"one to two messages longer", "words"),
    (r"exceed about \d+ to \d+ points", "checked with the sample's mdd"),
]


def test_every_number_in_the_page_has_a_source():
    prose = _prose()
    covered = np.zeros(len(prose), dtype=bool)
    for pattern, _ in [*CLAIMS, *DEFINITIONS]:
        for m in re.finditer(pattern, prose, flags=re.M | re.S):
            covered[m.start():m.end()] = True
    loose = [(prose.count("\n", 0, m.start()) + 1, m.group(0))
             for m in NUMBER.finditer(prose) if not covered[m.start():m.end()].all()]
    assert not loose, f"numbers with no source in docs/statistics.md (line, number): {loose}"


@pytest.mark.parametrize("index", range(len(CLAIMS)))
def test_a_quoted_number_matches_its_source(index, request):
    pattern, check = CLAIMS[index]
    if check is None:
        return  # checked by another claim
    found = list(re.finditer(pattern, _prose(), flags=re.M | re.S))
    assert found, f"claim not found in docs/statistics.md: {pattern[:60]!r}"
    for m in found:
        if isinstance(check, str):
            scores = request.getfixturevalue("sample_scores")
            {"sample": check_km_sample, "km_rows": check_km_rows, "km_models": check_km_models,
             "noise": check_noise_sample, "km_rows_ack": check_km_ack}[check](m, scores)
        else:
            result = check(m)
            assert result is None or result
