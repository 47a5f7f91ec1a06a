"""Imported by :mod:`accordkit` itself: keeps a library notice off report pages.

Report notebooks may import ``tqdm.auto`` (through datasets or a progress bar) in their
first cell, before :func:`~accordkit.report.setup.notebook_setup` runs: tqdm's notice that
Jupyter widgets are missing (its bars fall back to text) would otherwise land in every
page's Notes box.
"""

import warnings

from tqdm import TqdmWarning

warnings.filterwarnings("ignore", category=TqdmWarning)
