"""BCaFallbackWarning is shown as one line that says what to do (notebook, terminal,
report), while the message a test or a user catches keeps every cell."""

from __future__ import annotations

import warnings

import pandas as pd

from accordkit._internal.warnings_format import _plain
from accordkit.analysis.failures import failure_taxonomy
from accordkit.stats import BCaFallbackWarning, DegenerateIntervalWarning


def _stdlib_format(message, category, filename, lineno, line=None):
    """Python's default warning format, as the formatter in place before accordkit's."""
    return f"{filename}:{lineno}: {category.__name__}: {message}\n"


def _caught_from_a_taxonomy():
    # 12 tasks, 2 cells; "failed" is constant in one cell: BCa is undefined there
    episodes = pd.DataFrame({
        "episode_id": [f"e{i}" for i in range(24)],
        "domain": ["x"] * 12 + ["y"] * 12,
        "scenario_id": [f"t{i % 12}" for i in range(24)],
        "success": [True] * 12 + [i % 3 == 0 for i in range(12)]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        failure_taxonomy(episodes, by="domain", n_resamples=200)
    return [w for w in caught if issubclass(w.category, BCaFallbackWarning)]


def test_failure_taxonomy_warning_is_one_line_as_shown():
    caught = _caught_from_a_taxonomy()
    assert len(caught) == 1
    w = caught[0]
    assert "domain='x'" in str(w.message)            # the detail stays in the message
    shown = warnings.formatwarning(w.message, w.category, w.filename, w.lineno, w.line)
    assert shown.count("\n") == 1 and shown.endswith("\n")
    assert shown.startswith("BCaFallbackWarning: the BCa interval was undefined")
    assert "method='percentile'" in shown and "simplefilter('ignore'" in shown
    assert "summarize.py" not in shown and "warnings.warn(" not in shown
    # the report's formatter (plain_warnings) shows the same line
    assert _plain(w.message, w.category, w.filename, w.lineno) == shown


def test_other_warnings_are_shown_as_before():
    # the wrapper accordkit.stats installs, over Python's own formatter (another test may
    # have installed the CLI's plain one in this process: not looked at here)
    from accordkit.stats._warnings import _one_line

    shown = _one_line(_stdlib_format)(
        DegenerateIntervalWarning("fewer than two clusters"),
        DegenerateIntervalWarning, "/x.py", 3, "")
    assert "fewer than two clusters" in shown and "/x.py:3" in shown
    assert _plain(UserWarning("k capped"), UserWarning, "/x.py", 3) == "UserWarning: k capped\n"
