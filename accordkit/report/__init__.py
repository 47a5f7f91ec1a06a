"""Batch reports: parameterized notebooks run by papermill, exported to HTML."""

from .context import NotebookContext
from .drilldown import DrillDown
from .notebooks import NOTEBOOKS, NotebookSpec
from .outputs import ReportOutputs
from .provenance import collect_provenance
from .runner import build_report
from .setup import notebook_setup

__all__ = ["DrillDown", "NOTEBOOKS", "NotebookContext", "NotebookSpec", "ReportOutputs", "build_report", "collect_provenance",
           "notebook_setup"]
