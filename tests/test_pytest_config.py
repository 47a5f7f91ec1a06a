"""The test suite's warning policy in pyproject.toml (issue 33, quiet tests): every warning is
an error, except a short allow-list of third-party warnings we cannot fix, each with its reason.
accordkit's own warnings are never allowed through: a test that provokes one asserts it."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

from .conftest import REPO

PYPROJECT = REPO / "pyproject.toml"


def _filters() -> list[str]:
    data = tomllib.loads(PYPROJECT.read_text())
    return data["tool"]["pytest"]["ini_options"]["filterwarnings"]


def _fields(entry: str) -> dict[str, str]:
    """The fields of one ``action:message:category:module:lineno`` filter (missing ones empty)."""
    parts = (entry.split(":") + [""] * 5)[:5]
    return dict(zip(("action", "message", "category", "module", "lineno"), parts, strict=True))


def test_error_comes_first():
    """Filters listed later take precedence: "error" first makes every warning an error that
    no later entry of the allow-list names."""
    filters = _filters()
    assert filters[0] == "error"
    assert filters.count("error") == 1


def test_each_allowed_warning_names_a_third_party_module():
    allowed = _filters()[1:]
    assert len(allowed) <= 8, "the allow-list is meant to stay short"
    for entry in allowed:
        f = _fields(entry)
        assert f["action"] == "ignore", entry
        top = re.match(r"[A-Za-z_][A-Za-z0-9_]*", f["module"])
        assert top, f"{entry!r}: an allowed warning must name the module that raises it"
        package = top.group(0)
        assert package != "accordkit", f"{entry!r}: accordkit's own warnings are asserted in tests"
        assert not f["category"].startswith("accordkit"), entry
        assert importlib.util.find_spec(package) is not None, \
            f"{entry!r}: {package} is not installed, so the entry allows nothing"


def test_each_allowed_warning_says_why():
    """A comment on the entry's line or just above it gives the reason it is allowed."""
    text = PYPROJECT.read_text()
    block = re.search(r"^filterwarnings = \[\n(.*?)^\]", text, re.S | re.M)
    assert block, "filterwarnings is written one entry a line"
    lines = block.group(1).splitlines()
    for i, line in enumerate(lines):
        entry = re.match(r'\s*"([^"]*)",?\s*(#.*)?$', line)
        if not entry or entry.group(1) == "error":
            continue
        commented = entry.group(2) or (i > 0 and lines[i - 1].strip().startswith("#"))
        assert commented, f"{entry.group(1)!r} has no comment saying why it is allowed"


# --- the fast default and the machinery markers (issue 42) -----------------------------------

def _ini() -> dict:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["pytest"]["ini_options"]


def test_every_machinery_marker_is_registered_and_strict():
    from .conftest import SLOW_MARKERS
    from .machinery import MARKERS

    registered = {m.split(":")[0] for m in _ini()["markers"]}
    assert set(MARKERS) | {"slow", "install"} <= registered
    assert set(SLOW_MARKERS) == set(MARKERS) | {"slow"}
    addopts = _ini()["addopts"].split()
    assert "--strict-markers" in addopts and "--durations=20" in addopts


def test_make_test_is_the_fast_default_and_test_all_runs_everything():
    make = (REPO / "Makefile").read_text()
    test = re.search(r"^test: .*\n\t(.*)$", make, re.M).group(1)
    every = re.search(r"^test-all: .*\n\t(.*)$", make, re.M).group(1)
    assert "--fast" in test and '-m "not install"' in test
    assert "--fast" not in every and '-m "not install"' in every
    ci = (REPO / ".ci" / "run").read_text()
    assert "make test-all " in ci and "make test-install " in ci
    assert not re.search(r"make test ", ci)
    readme = (REPO / "README.md").read_text()
    assert "make test-all" in readme and "`make test`" in readme
    # the whole suite on two workers, the tests sharing a build kept in one (tests/conftest.py)
    assert re.search(r"-n \$\(TEST_WORKERS\) --dist loadgroup", every)
    assert re.search(r"^TEST_WORKERS \?= 2$", make, re.M)


def test_the_tests_sharing_a_build_or_ray_or_a_document_share_one_worker(request):
    """Under `make test-all`'s workers, each report built once per session is built in one
    worker, one Ray runs at a time, and one document's examples run in order in one worker."""
    from .conftest import SHARED_BUILDS, worker_groups

    items = request.session.items
    groups = worker_groups(items)
    sets = {name: [i for i in items if name in getattr(i, "fixturenames", ())]
            for name in SHARED_BUILDS}
    sets["ray"] = [i for i in items if i.get_closest_marker("ray")]
    for item in items:
        example = getattr(getattr(item, "callspec", None), "params", {}).get("ex")
        if item.nodeid.startswith("tests/test_docs_examples.py::") and example is not None:
            sets.setdefault(example.id.split(":")[0], []).append(item)
    for name, users in sets.items():
        assert len({groups.get(i) for i in users}) <= 1, name
        assert None not in {groups.get(i) for i in users}, name
    assert set(groups) == {i for users in sets.values() for i in users}
    if request.config.pluginmanager.hasplugin("xdist"):
        assert all(i.get_closest_marker("xdist_group").args[0] == g for i, g in groups.items())
    if hasattr(request.config, "workerinput") and \
            getattr(request.config.option, "loadgroup", False):
        # in a worker of `make test-all`: the controller's scheduler reads these groups
        import json
        import os

        from .conftest import GROUPS_FILE

        told = json.loads(Path(os.environ[GROUPS_FILE]).read_text(encoding="utf-8"))
        assert told == {i.nodeid: g for i, g in groups.items()}


def test_the_scheduler_sends_each_group_as_one_unit_and_other_tests_alone(tmp_path):
    """The controller's side: a test of a group is scheduled with its group, any other test
    on its own (tests/workers.py)."""
    import json

    pytest.importorskip("xdist", reason="pytest-xdist is not installed (the dev extra has it)")
    from .workers import GroupScheduling

    groups = tmp_path / "groups.json"
    groups.write_text(json.dumps({"tests/a.py::t1": "ray", "tests/b.py::t2[x]": "ray",
                                  "tests/c.py::t3": "sample_report"}))
    config = pytest.Config.fromdictargs({"dist": "loadgroup", "tx": ["2*popen"]}, [])
    sched = GroupScheduling(config, groups_file=groups)
    assert sched._split_scope("tests/a.py::t1") == sched._split_scope("tests/b.py::t2[x]")
    assert sched._split_scope("tests/a.py::t1") != sched._split_scope("tests/c.py::t3")
    assert sched._split_scope("tests/a.py::t4") == "tests/a.py::t4"


def _uses_browser(browser):
    return browser


def _runs_a_report(tmp_path):
    from accordkit.report.runner import build_report

    return build_report(out=tmp_path)


def _through_a_helper(tmp_path):
    return _runs_a_report(tmp_path)


def _payload_report(tmp_path, tau2_dir, sample_dir):
    from tests.payloads import hostile_report

    return hostile_report(tmp_path, template=tau2_dir, sample=sample_dir)


def _papermill_by_its_module_name(tmp_path):
    import papermill as pm

    pm.execute_notebook("a.ipynb", tmp_path / "b.ipynb")


def _a_new_interpreter():
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-c", "pass"], check=True)


def _git_only():
    import subprocess

    return subprocess.run(["git", "ls-files"], capture_output=True, check=True)


def _the_ray_engine(shards, tmp_path):
    from accordkit.engines import score_to_store

    return score_to_store([str(shards)], out=tmp_path, engine="ray")


def _a_local_cluster():
    from accordkit.engines.ray_cluster import LocalCluster

    return LocalCluster(nodes=2)


def _a_unit_test():
    import pandas as pd

    return pd.DataFrame({"x": [1]}).sum()


@pytest.mark.parametrize(("functions", "fixtures", "expected"), [
    ([_uses_browser], ["browser"], {"browser"}),
    ([_a_unit_test], ["visit", "tmp_path"], {"browser"}),
    ([_a_unit_test], ["sample_report"], {"notebook"}),
    ([_a_unit_test], ["ray_cluster"], {"ray"}),
    ([_runs_a_report], [], {"notebook"}),
    ([_through_a_helper], [], {"notebook"}),
    ([_payload_report], [], {"notebook"}),
    ([_papermill_by_its_module_name], [], {"notebook"}),
    ([_a_new_interpreter], [], {"cli"}),
    ([_git_only], [], set()),
    ([_the_ray_engine], [], {"ray"}),
    ([_a_local_cluster], [], {"ray"}),
    ([_a_unit_test], ["tmp_path", "sample_dir"], set()),
    ([_a_unit_test, _a_new_interpreter], ["tmp_path"], {"cli"}),     # a fixture's function
])
def test_the_machinery_a_test_starts_is_read_from_its_fixtures_and_code(functions, fixtures,
                                                                         expected):
    from .machinery import machinery_of

    assert machinery_of(functions, fixtures) == expected


def test_worker_interpreters_by_parameter_need_the_cli_marker():
    from .machinery import machinery_of

    assert machinery_of([_a_unit_test], [], params={"num_proc": 2}) == {"cli"}
    assert machinery_of([_a_unit_test], [], params={"num_proc": 1, "level": "x"}) == set()


@pytest.mark.parametrize(("args", "marker"), [
    (["git", "ls-files"], None), (["/usr/bin/ruff", "check"], None), ("make -n test", None),
    (["uname", "-p"], None), (["pandoc", "--version"], None),
    (["/venv/bin/python", "-c", "pass"], "cli"), (["/venv/bin/python3.11", "-m", "x"], "cli"),
    (["bash", "-c", "x"], "cli"), (["chromium"], "cli"), ("accordkit report", "cli"),
])
def test_a_heavy_process_needs_the_cli_marker_a_quick_tool_does_not(args, marker):
    from .machinery import started_by

    assert started_by(args) == marker


def test_every_test_of_this_run_using_a_machinery_fixture_carries_its_marker(request):
    from .conftest import SLOW_MARKERS, _fast
    from .machinery import FIXTURES

    missing = [(item.nodeid, marker) for item in request.session.items
               for marker, names in FIXTURES.items()
               if set(getattr(item, "fixturenames", ())) & names
               and not item.get_closest_marker(marker)]
    assert missing == []
    if _fast(request.config):
        assert [i.nodeid for i in request.session.items
                if any(i.get_closest_marker(m) for m in SLOW_MARKERS)] == []


_COLLECT_PLUGIN = '''
import json, os

def pytest_collection_finish(session):
    names = ("notebook", "ray", "browser", "cli", "slow")
    with open(os.environ["AK_COLLECTED"], "w") as fh:
        json.dump([{"id": i.nodeid, "fixtures": sorted(getattr(i, "fixturenames", [])),
                    "markers": [m for m in names if i.get_closest_marker(m)]}
                   for i in session.items], fh)
'''

def _plain_id(nodeid: str) -> str:
    """A test's id without the ``@group`` pytest-xdist adds to it in a worker."""
    at = nodeid.rfind("@")
    return nodeid[:at] if at > nodeid.rfind("]") else nodeid


def _described(items) -> dict[str, dict]:
    """Each test's id, fixtures and markers, as the collecting plugin above writes them."""
    from .conftest import SLOW_MARKERS

    return {_plain_id(i.nodeid): {"id": _plain_id(i.nodeid),
                                  "fixtures": sorted(getattr(i, "fixturenames", [])),
                                  "markers": [m for m in SLOW_MARKERS if i.get_closest_marker(m)]}
            for i in items}


def _collected_the_whole_suite(config: pytest.Config) -> bool:
    """Whether this session collected what `make test-all` collects: pyproject's test
    paths with ``-m "not install"``, nothing else chosen or left out."""
    return (config.args_source is pytest.Config.ArgsSource.TESTPATHS
            and not config.getoption("--fast")
            and config.getoption("markexpr") == "not install"
            and not config.getoption("keyword") and not config.getoption("deselect")
            and not config.getoption("ignore") and not config.getoption("ignore_glob")
            and not config.getoption("lf", False) and not config.getoption("stepwise", False))


def _collect(tmp_path, extra: list[str]) -> dict[str, dict]:
    """The suite collected in a new process as `make test` (``--fast``) or `make test-all`
    collects it."""
    import json
    import os
    import subprocess
    import sys

    (tmp_path / "ak_collected.py").write_text(_COLLECT_PLUGIN)
    out = tmp_path / f"collected{len(extra)}.json"
    env = {**os.environ, "AK_COLLECTED": str(out),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only",
                           "-p", "no:cacheprovider", "-p", "ak_collected",
                           "-m", "not install", *extra], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return {i["id"]: i for i in json.loads(out.read_text())}


def test_the_whole_suite_is_marked_and_the_fast_default_leaves_out_every_marked_test(
        tmp_path, request):
    """Collected as `make test` and `make test-all` collect it: every test that uses a
    machinery fixture carries the marker, the known heavy modules are marked, and the
    fast default selects none of them.

    When this session is `make test-all` (it collected the whole suite, on each worker),
    its own tests are checked, and the fast default's choice among them; else the suite is
    collected twice in new processes, as the two targets collect it (about 30 s)."""
    from .conftest import leave_out_slow
    from .machinery import FIXTURES

    if _collected_the_whole_suite(request.config):
        every = _described(request.session.items)
        fast = _described(leave_out_slow(list(request.session.items))[0])
    else:
        every, fast = _collect(tmp_path, []), _collect(tmp_path, ["--fast"])
    assert len(every) > 2000 and set(fast) < set(every)
    unmarked = [(i["id"], m) for i in every.values() for m, names in FIXTURES.items()
                if set(i["fixtures"]) & names and m not in i["markers"]]
    assert unmarked == []
    heavy = {"tests/browser/": "browser", "tests/report/test_runner.py::test_every": "notebook",
             "tests/report/test_hostile_names.py": "notebook",
             "tests/engines/test_ray_routes.py": "ray",
             "tests/judges/test_ray_judge.py::test_a_killed": "ray",
             "tests/test_docs_examples.py::test_example_runs": "cli",
             "tests/test_cli_start.py::test_help": "cli"}
    for prefix, marker in heavy.items():
        found = [i for k, i in every.items() if k.startswith(prefix)]
        assert found, prefix
        assert all(marker in i["markers"] for i in found), (prefix, [
            i["id"] for i in found if marker not in i["markers"]])
    assert [k for k, i in fast.items() if i["markers"]] == []
    assert {k for k, i in every.items() if not i["markers"]} == set(fast)
