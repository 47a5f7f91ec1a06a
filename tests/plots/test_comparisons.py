"""The comparison page's forest plot is faceted (issue 36, item 5)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from accordkit.plots.comparisons import plot_forest_facets  # noqa: E402

USER = " | user: u (user_simulator)"


def _results():
    rows = []
    for bench, domain, metrics in (("tau2", "airline", ["reward", "success"]),
                                   ("tau2", "retail", ["reward", "success"]),
                                   ("accord", "shop", ["task_score"])):
        for metric in metrics:
            for i, model in enumerate(["m2", "m3"]):
                rows.append({"benchmark": bench, "domain": domain, "metric": metric,
                             "configuration": f"{model} (llm_agent){USER}",
                             "baseline": f"m1 (llm_agent){USER}", "delta": 0.1 * (i + 1),
                             "ci_low": 0.0, "ci_high": 0.3, "p_adjusted": 0.01 + i})
    return pd.DataFrame(rows)


def test_one_panel_per_benchmark_domain_and_metric_with_short_labels():
    fig = plot_forest_facets(_results())
    shown = [ax for ax in fig.axes if ax.get_visible()]
    titles = sorted(ax.get_title().split("\n")[0] for ax in shown)
    assert titles == ["accord · shop: task_score", "tau2 · airline: reward",
                      "tau2 · airline: success", "tau2 · retail: reward",
                      "tau2 · retail: success"]
    assert len(fig.axes) == 6                     # 3 rows x 2 columns, one left empty
    first = fig.axes[0]
    assert [t.get_text() for t in first.get_yticklabels()] == ["m2", "m3"]
    assert first.get_title().endswith("vs m1")
    plt.close(fig)
