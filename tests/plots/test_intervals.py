import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from accordkit.plots import (  # noqa: E402
    model_palette,
    plot_forest,
    plot_gsrt,
    plot_intervals,
    plot_passk,
    save_figure,
)


def _summary():
    return pd.DataFrame({"metric": ["a", "a", "b", "b"], "agent_model": ["m1", "m2"] * 2,
                         "estimate": [.5, .6, .3, .4], "ci_low": [.4, .5, .2, .3],
                         "ci_high": [.6, .7, .4, .5], "small_cell": [False, True, False, False]})


def test_palette_is_stable_and_independent_of_order():
    assert model_palette(["b", "a"]) == model_palette(["a", "b", "a"])


def test_error_bars_come_from_the_given_intervals():
    grid = plot_intervals(_summary())
    ax = grid.axes.flat[0]
    segments = [seg for coll in ax.collections for seg in getattr(coll, "get_segments",
                                                                    lambda: [])()]
    spans = sorted(round(float(s[1][1] - s[0][1]), 6) for s in segments if len(s) == 2)
    assert spans == [0.2, 0.2, 0.2, 0.2]


def test_save_figure_writes_png_and_svg_without_date(tmp_path):
    paths = save_figure(plot_intervals(_summary()), tmp_path / "f", description="prov line")
    assert [p.suffix for p in paths] == [".png", ".svg"]
    svg = paths[1].read_text()
    assert "<dc:date>" not in svg and "prov line" in svg


def test_forest_passk_and_gsrt_plots_build(tmp_path):
    comp = pd.DataFrame({"agent_model": ["m2"], "baseline": ["m1"], "delta": [.1],
                         "ci_low": [-.05], "ci_high": [.2], "p_adjusted": [.3]})
    passk = pd.DataFrame({"agent_model": ["m1"] * 3, "k": [1, 2, 3],
                          "pass_hat_k": [.5, .3, .2], "ci_low": [.4, .2, .1],
                          "ci_high": [.6, .4, .3]})
    shifts = pd.DataFrame({"agent_model": ["m1", "m1", "m2"], "gsrt_ack": [1.0, None, 3.0],
                           "gsrt_tool": [2.0, 4.0, None], "gsrt_outcome": [None, None, 5.0]})
    for fig in (plot_forest(comp), plot_passk(passk), plot_gsrt(shifts)):
        assert save_figure(fig, tmp_path / "x", close=True)[0].stat().st_size > 0
    # censored shifts are announced in the panel titles
    fig = plot_gsrt(shifts)
    assert "1 of 3 not reached" in fig.axes[0].get_title()


def test_pass_curves_one_panel_per_domain():
    from accordkit.plots.tau2 import plot_pass_curves

    passk = pd.DataFrame({"domain": ["a", "a", "b"], "configuration": ["c"] * 3,
                          "k": [1, 2, 1], "pass_hat_k": [.5, .25, .8],
                          "pass_at_k": [.5, .75, .8], "ci_low": [.2, .1, .4],
                          "ci_high": [.8, .5, 1.0]})
    fig = plot_pass_curves(passk, title="t")
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["a", "b"]
    assert len(axes[0].get_lines()) == 2  # pass^k and pass@k
    assert plot_pass_curves(passk.iloc[0:0]).get_axes()[0].get_title() == "(no episodes)"


def test_an_empty_summary_gives_a_panel_that_says_so(tmp_path):
    # e.g. AcCoRD episodes without any preference: no dynamics to plot, and no crash
    empty = pd.DataFrame(columns=["dynamic", "agent_model", "method", "estimate", "ci_low",
                                  "ci_high"])
    grid = plot_intervals(empty, x="dynamic", hue="agent_model", col="method",
                          title="Preference score by dynamic")
    texts = [t.get_text() for t in grid.ax.texts]
    assert texts == ["nothing to plot: no rows"]
    save_figure(grid, tmp_path / "empty")
    assert (tmp_path / "empty.png").stat().st_size > 0


DOLLAR = r"$\notacommand$"     # a model name from a results file; mathtext would fail on it


def _dollar_figures():
    """Every figure function of accordkit, each with the ``$`` name in every data field."""
    from accordkit.plots import plot_forest_facets, plot_pass_curves, plot_recovery_curves

    other = "$x$ plain"
    summary = pd.DataFrame({"metric": [DOLLAR, DOLLAR], "agent_model": [DOLLAR, other],
                            "domain": [DOLLAR, DOLLAR], "estimate": [.5, .6],
                            "ci_low": [.4, .5], "ci_high": [.6, .7]})
    comp = pd.DataFrame({"agent_model": [DOLLAR], "baseline": [other], "delta": [.1],
                         "ci_low": [-.05], "ci_high": [.2], "p_adjusted": [.3],
                         "metric": [DOLLAR], "domain": [DOLLAR], "benchmark": [DOLLAR],
                         "configuration": [DOLLAR]})
    passk = pd.DataFrame({"agent_model": [DOLLAR] * 2, "configuration": [DOLLAR] * 2,
                          "domain": [DOLLAR] * 2, "k": [1, 2], "pass_hat_k": [.5, .3],
                          "pass_at_k": [.6, .7], "ci_low": [.4, .2], "ci_high": [.6, .4]})
    shifts = pd.DataFrame({"agent_model": [DOLLAR, other], "gsrt_ack": [1.0, 2.0],
                           "gsrt_tool": [2.0, None], "gsrt_outcome": [3.0, 1.0]})
    curves = pd.DataFrame({"agent_model": [DOLLAR] * 2, "event": [DOLLAR] * 2,
                           "time": [0.0, 2.0], "survival": [1.0, 0.5], "n_shifts": [2, 2],
                           "n_censored": [1, 1]})
    return {
        "plot_intervals": plot_intervals(summary, col="domain", title=DOLLAR),
        "plot_forest": plot_forest(comp, title=DOLLAR),
        "plot_passk": plot_passk(passk, title=DOLLAR),
        "plot_gsrt": plot_gsrt(shifts, title=DOLLAR),
        "plot_recovery_curves": plot_recovery_curves(curves, title=DOLLAR),
        "plot_forest_facets": plot_forest_facets(comp, title=DOLLAR),
        "plot_pass_curves": plot_pass_curves(passk, title=DOLLAR),
    }


def test_every_figure_draws_dollar_names_as_text_never_as_math(tmp_path):
    # the reproduction: a model named $\notacommand$ failed the tau2 and comparison pages
    import matplotlib.pyplot as plt
    from matplotlib.text import Text

    for name, fig in _dollar_figures().items():
        save_figure(fig, tmp_path / name)          # drawing it raised ValueError before
        figure = getattr(fig, "figure", fig)
        texts = [t for t in figure.findobj(Text) if t.get_text()]
        assert all(not t.get_parse_math() for t in texts), name
        shown = [t.get_text() for t in texts]
        assert any(DOLLAR in s for s in shown), (name, shown)
        plt.close(figure)


def test_a_figure_made_elsewhere_is_saved_with_plain_text(tmp_path):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.set_yticks([0, 1], [DOLLAR, "$y$"])
    ax.set_title(DOLLAR)
    assert save_figure(fig, tmp_path / "f", close=True)[0].stat().st_size > 0
