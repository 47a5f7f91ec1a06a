"""How `make test-all` shares the suite between two pytest-xdist workers (issue 42).

The tests that share a report built once per session, those that start Ray and the examples
of one document must run in one worker (tests/conftest.py, :func:`worker_groups`). Each
worker writes the group of each such test to a file its controller named; the controller's
scheduler, :class:`GroupScheduling`, reads it and sends each group to one worker as one unit
of work, the other tests one by one to whichever worker is free.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling


class GroupScheduling(LoadScopeScheduling):
    """pytest-xdist's scope scheduling, a scope being a group of ``groups_file`` or, for a
    test in no group, the test alone. Units are sent largest first (pytest-xdist's
    ``--loadscope-reorder``, its default): the groups start before the single tests."""

    def __init__(self, config: pytest.Config, log=None, *, groups_file: Path) -> None:
        super().__init__(config, log)
        self.groups_file = groups_file
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:
            # read once every worker has collected (schedule() runs only then)
            self.groups = json.loads(self.groups_file.read_text(encoding="utf-8")) \
                if self.groups_file.is_file() else {}
        group = self.groups.get(nodeid)
        return f"group:{group}" if group is not None else nodeid
