"""``NotebookContext``: what every report notebook does first, in one place.

A notebook's parameters cell defines plain variables (papermill overwrites them); the
notebook then calls ``NotebookContext.from_parameters(name, globals())`` and gets the loaded
dataset, score frames filtered by the ``models`` / ``domains`` parameters, the bootstrap
options and a :class:`~accordkit.report.outputs.ReportOutputs` for its tables and figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from ..tables import bootstrap_options, select
from .outputs import ReportOutputs
from .runner import DEFAULT_PARAMETERS
from .setup import notebook_setup

__all__ = ["NotebookContext", "PARAMETER_NAMES"]

#: Every notebook parameter: the shared defaults plus the inputs and output locations.
PARAMETER_NAMES = (*DEFAULT_PARAMETERS, "source", "verdicts", "out_dir", "figures_dir",
                   "provenance_path", "scores_dir")


@dataclass
class NotebookContext:
    """Parameters of one notebook run, and the data they select.

    Parameters
    ----------
    notebook : str
        The notebook's name (prefix of its output files).
    params : mapping
        The notebook parameters (see :data:`PARAMETER_NAMES`).
    """

    notebook: str
    params: Mapping[str, Any]
    _scores: dict[str, pd.DataFrame] = field(default_factory=dict, repr=False)

    @classmethod
    def from_parameters(cls, notebook: str, namespace: Mapping[str, Any]) -> NotebookContext:
        """Collect the parameters from a notebook's namespace (``globals()``) and set up.

        A notebook declares only the parameters it uses; the others take their defaults
        (:data:`~accordkit.report.runner.DEFAULT_PARAMETERS`, or None). ``out_dir`` is
        required.
        """
        missing = [n for n in ("out_dir",) if n not in namespace]
        if missing:
            raise NameError(f"{notebook}: the parameters cell does not define {missing}")
        notebook_setup()
        return cls(notebook, {n: namespace[n] if n in namespace else DEFAULT_PARAMETERS.get(n)
                              for n in PARAMETER_NAMES})

    def __getitem__(self, name: str) -> Any:
        return self.params[name]

    @property
    def interactive(self) -> bool:
        """True when run by hand (not by ``accordkit report``, which passes provenance)."""
        return self.params.get("provenance_path") is None

    @cached_property
    def out(self) -> ReportOutputs:
        figures = self.params.get("figures_dir") or ("../figures" if self.interactive else None)
        return ReportOutputs(self.params["out_dir"], self.notebook,
                             self.params.get("provenance_path"), figures_dir=figures)

    @property
    def boot(self) -> dict[str, Any]:
        """Keyword options for :func:`accordkit.summarize`."""
        return bootstrap_options(self.params)

    def group(self, default: Sequence[str]) -> list[str]:
        """The ``by`` parameter, or the notebook's default grouping."""
        by = self.params.get("by")
        return [by] if isinstance(by, str) else list(by) if by else list(default)

    @cached_property
    def dataset(self):
        """All episodes of ``source`` (bad records skipped and reported)."""
        from ..load import load

        if not self.params.get("source"):
            raise NameError(f"{self.notebook}: the parameters cell does not define `source`")
        return load(self.params["source"], revision=self.params.get("revision"),
                    split=self.params.get("split"), errors="skip")

    def episodes_by_id(self, episode_ids: Sequence[str]):
        """The transcripts of just these episodes (a drill-down shows a few of many).

        From a score store (``scores_dir``) only the inputs and rows holding them are read;
        otherwise they are selected from :attr:`dataset`.
        """
        ids = [str(e) for e in episode_ids]
        if self.params.get("scores_dir") and "dataset" not in self.__dict__:
            from ..store import fetch_episodes, read_manifest

            # a store written by `accordkit score` knows which input holds each episode; the
            # report's own store (scored once from the loaded sources) does not
            if read_manifest(self.params["scores_dir"]).get("engine") != "report":
                return fetch_episodes(self.params["scores_dir"], ids)
        ds = self.dataset
        index = {eid: i for i, eid in enumerate(ds["episode_id"])}
        return ds.select([index[e] for e in ids if e in index])

    def modes(self) -> pd.DataFrame:
        """:func:`accordkit.compare_modes` of the goal-shift source files: from the score
        store when there is one (computed while scoring), else from :attr:`dataset`."""
        if self.params.get("scores_dir"):
            from ..store import read_modes

            return read_modes(self.params["scores_dir"])
        from ..metrics.compare_modes import compare_modes

        return compare_modes(self.dataset)

    @cached_property
    def verdicts(self) -> pd.DataFrame | None:
        """Stored judge verdicts from the ``verdicts`` files, or None."""
        paths = self.params.get("verdicts") or []
        if not paths:
            return None
        from ..judges.verdicts import read_verdicts

        return read_verdicts(paths)

    def scores(self, level: str = "episode", *,
               benchmarks: Sequence[str] | None = None,
               columns: Sequence[str] | None = None,
               ids: Sequence[str] | None = None) -> pd.DataFrame:
        """Score frame at ``level``, with the notebook's modes, filtered by its parameters.

        ``columns`` (besides the id columns) limits what is read from a score store: a
        preference frame of a million episodes has millions of rows. ``ids`` (with
        ``columns``) limits the id columns too; those the filters read (benchmark, domain,
        agent model) are always there.
        """
        if ids is not None:
            ids = list(dict.fromkeys(["benchmark", "domain", "agent_model",
                                      *(c for c in ids if c)]))
        key = level if columns is None else (level, tuple(columns),
                                             None if ids is None else tuple(ids))
        if key not in self._scores:
            if self.params.get("scores_dir"):
                from ..store import read_scores

                # preferences: many rows per episode, so text as categories (6.2 million
                # rows of a million AcCoRD episodes take 0.26 GB instead of 1.6 GB); the
                # report says what became of the inputs, on its index page
                self._scores[key] = read_scores(
                    self.params["scores_dir"], level=level, columns=columns,
                    exact_dtypes=False, categorical=level == "preference", check_inputs=False,
                    ids=ids)
            else:
                if level not in self._scores:
                    from ..score import score

                    self._scores[level] = score(
                        self.dataset, level=level, tcrr_mode=self.params["tcrr_mode"],
                        action_mode=self.params["action_mode"], verdicts=self.verdicts)
                frame = self._scores[level]
                if columns is not None:
                    from ..names import ID_COLUMNS

                    keep = ID_COLUMNS if ids is None else ids
                    frame = frame[[c for c in frame.columns if c in keep or c in columns]]
                self._scores[key] = frame
        return select(self._scores[key], models=self.params.get("models"),
                      domains=self.params.get("domains"), benchmarks=benchmarks)
