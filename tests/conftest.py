"""Shared test fixtures: paths to the sample data and to the released fixture files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[1]


def _shared_folder() -> Path:
    """The folder holding fixtures/: $ACCORDKIT_SHARED when set, else ../shared beside the
    clone. Nothing else: a test run never depends on a path of one machine."""
    if os.environ.get("ACCORDKIT_SHARED"):
        return Path(os.environ["ACCORDKIT_SHARED"])
    return REPO.parent / "shared"


SHARED = _shared_folder()
FIXTURES = SHARED / "fixtures"
ACB = FIXTURES / "agentchangebench"
TAU2 = FIXTURES / "tau2"
SAMPLE = REPO / "data" / "sample"


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"released fixture files not found at {path} "
                    "(set ACCORDKIT_SHARED to the folder holding fixtures/)")
    return path


@pytest.fixture(scope="session")
def acb_dir() -> Path:
    """Folder of real AgentChangeBench result files (skips when absent)."""
    return _need(ACB)


@pytest.fixture(scope="session")
def tau2_dir() -> Path:
    """Folder of real tau2-bench result files (skips when absent)."""
    return _need(TAU2)


@pytest.fixture(scope="session")
def expected_upstream(acb_dir: Path) -> dict:
    """Values the upstream AgentChangeBench code computes on each fixture file."""
    import json

    return json.loads((acb_dir / "expected_upstream.json").read_text())["files"]


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    if not SAMPLE.exists():
        pytest.skip("data/sample has not been generated (run `make sample`)")
    return SAMPLE


@pytest.fixture
def read_ahead_done(monkeypatch: pytest.MonkeyPatch):
    """An event set each time the loader has read a file ahead (on its other thread): a
    test that stands for another process changing a file waits for it first."""
    import importlib
    import threading

    load_mod = importlib.import_module("accordkit.ingest.prefetch")
    real = load_mod._read_and_hash
    done = threading.Event()

    def read_and_hash(path, cache):
        try:
            return real(path, cache)
        finally:
            done.set()

    monkeypatch.setattr(load_mod, "_read_and_hash", read_and_hash)
    return done


@pytest.fixture(scope="session")
def hostile_report(tmp_path_factory, tau2_dir, sample_dir) -> Path:
    """A report built from result files whose every name is a script and whose domain is a
    path out of the report (tests/payloads.py); shared by the report and browser tests."""
    from tests.payloads import hostile_report as build

    return build(tmp_path_factory.mktemp("hostile"),
                 template=tau2_dir / "airline_grok-3_4tasks_4trials.json", sample=sample_dir)


#: The API key in the environment while the shared sample report is built: a test asserts
#: that no artifact of the report holds it.
REPORT_KEY = "sk-accordkit-test-NEVER-WRITE-ME-0123456789"
#: Parameters of the shared reports: few resamples, a fixed seed.
SMALL_REPORT = {"n_resamples": 200, "seed": 1}


class BuiltReport(NamedTuple):
    """A report built once per test session: its folder and each notebook's result."""

    out: Path
    results: dict


def _build(out: Path, sources: list[str] | None = None) -> BuiltReport:
    from accordkit.report.runner import build_report

    results = build_report(sources, out=out, params=SMALL_REPORT, jobs=2, progress=False)
    return BuiltReport(out, {r.notebook: r for r in results})


@pytest.fixture
def report_command():
    """``accordkit report ARGS...`` run in this process; returns its exit code. The notebooks
    it runs start kernels: a test using it carries the ``notebook`` marker (a bare
    ``main(["report", ...])`` is not recognised, see tests/machinery.py)."""
    from accordkit.cli import main

    return lambda *args: main(["report", *map(str, args)])


@pytest.fixture(scope="session")
def sample_report(tmp_path_factory, sample_dir) -> BuiltReport:
    """The report of the embedded sample (every notebook), built once with
    :data:`REPORT_KEY` in the environment; shared by tests/report/ and tests/browser/.
    Tests read it and never change it."""
    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = REPORT_KEY
    try:
        return _build(tmp_path_factory.mktemp("sample_report"))
    finally:
        if before is None:
            del os.environ["OPENAI_API_KEY"]
        else:
            os.environ["OPENAI_API_KEY"] = before


@pytest.fixture(scope="session")
def fixture_report(tmp_path_factory, acb_dir, tau2_dir) -> BuiltReport:
    """The report of every released AgentChangeBench and tau2 result file, built once;
    shared by tests/report/ and tests/browser/. Tests read it and never change it."""
    sources = sorted(str(p) for d in (acb_dir, tau2_dir) for p in d.glob("*.json")
                     if p.name != "expected_upstream.json")
    return _build(tmp_path_factory.mktemp("fixture_report"), sources)


#: Released AgentChangeBench files that define a task twice with different content (so upstream
#: released them): reading one warns so, and a test that reads it asserts the warning.
TWICE_DEFINED = frozenset({"banking_gpt-4.1_legacy-reward_meta-tags_7sims.json"})


def warns_of_twice_defined_tasks(paths):
    """``pytest.warns`` for the warning that reading these files gives when one of them is in
    :data:`TWICE_DEFINED`, else a context that expects nothing."""
    import contextlib

    paths = [paths] if isinstance(paths, (str, Path)) else paths
    if any(Path(p).name in TWICE_DEFINED for p in paths):
        return pytest.warns(UserWarning, match="is defined 2 times with different content")
    return contextlib.nullcontext()


# --- the fast default and the machinery markers (issue 42) -----------------------------------

#: Markers ``make test`` leaves out: the machinery ones (tests/machinery.py adds them) and
#: ``slow`` (set by hand on a test that is slow without starting anything).
SLOW_MARKERS = ("notebook", "ray", "browser", "cli", "slow")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast", action="store_true", default=False,
        help="the fast default (make test): leave out the tests marked "
             f"{', '.join(SLOW_MARKERS)} unless test paths are named on the command line")


def _fixture_functions(item: pytest.Item) -> list:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    return [d.func for name in item.fixturenames for d in info.name2fixturedefs.get(name, ())]


def _fast(config: pytest.Config) -> bool:
    """Whether this run leaves the slow tests out: ``--fast`` and no test path named (a
    named file runs whole, so that a change to it is checked whole)."""
    return bool(config.getoption("--fast")) and \
        config.args_source is not pytest.Config.ArgsSource.ARGS


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by the machinery it starts; in the fast default, leave those out;
    run the tests sharing the Ray cluster one after the other (it lives only meanwhile);
    under pytest-xdist, mark the tests that must share a worker (:func:`worker_groups`).
    First of every plugin's, so that pytest-xdist's own hook sees the ``xdist_group`` marks
    (in a worker this conftest registers before pytest-xdist's plugin, whose hook would
    otherwise come first)."""
    from tests.machinery import known_calls, machinery_of

    known = known_calls()
    for item in items:
        function = getattr(item, "function", None)
        if function is None:            # a doctest: runs in this process, starts nothing
            continue
        params = getattr(getattr(item, "callspec", None), "params", None)
        for marker in sorted(machinery_of([function, *_fixture_functions(item)],
                                          item.fixturenames, known=known, params=params)):
            item.add_marker(marker)
    users = [i for i in items if "ray_cluster" in getattr(i, "fixturenames", ())]
    if users:
        first = items.index(users[0])
        shared = set(users)
        rest = [i for i in items if i not in shared]
        rest[first:first] = users
        items[:] = rest
    if config.pluginmanager.hasplugin("xdist"):
        for item, group in worker_groups(items).items():
            item.add_marker(pytest.mark.xdist_group(group))
    if _fast(config):
        keep, drop = leave_out_slow(items)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
        config.stash[_LEFT_OUT] = len(drop)


def leave_out_slow(items: list[pytest.Item]) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """The tests the fast default keeps and those it leaves out (a marker of
    :data:`SLOW_MARKERS`), each in the order given."""
    keep, drop = [], []
    for item in items:
        (drop if any(item.get_closest_marker(m) for m in SLOW_MARKERS) else keep).append(item)
    return keep, drop


#: Fixtures built once per session (or per module, with everything they start) that their
#: users share: under ``make test-all``'s two workers (pytest-xdist ``--dist loadgroup``) all
#: the users of one run in one worker, so that it is built once.
SHARED_BUILDS = frozenset({"sample_report", "fixture_report", "hostile_report", "tau2_report",
                           "lab"})


def worker_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """The worker group (pytest-xdist's ``xdist_group``) of each test that must share a
    worker; the other tests go to whichever worker is free.

    Tests sharing a fixture of :data:`SHARED_BUILDS` share a worker; so do every test that
    starts Ray (one Ray at a time on the machine: the session's 3-node cluster, a local Ray,
    a node-killing test) and the examples of one document (tests/test_docs_examples.py: they
    share a working folder and run in the document's order). A test in two such sets joins
    them into one group, named after the first set met.
    """
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    keys_of: dict[pytest.Item, list[str]] = {}
    for item in items:
        keys = sorted(SHARED_BUILDS & set(getattr(item, "fixturenames", ())))
        if item.get_closest_marker("ray"):
            keys.append("ray")
        example = getattr(getattr(item, "callspec", None), "params", {}).get("ex")
        if item.nodeid.startswith("tests/test_docs_examples.py::") and example is not None:
            keys.append(f"docs_{Path(example.doc).stem}")
        if not keys:
            continue
        keys_of[item] = keys
        for key in keys:
            parent.setdefault(key, key)
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    return {item: root(keys[0]) for item, keys in keys_of.items()}


#: The file through which the workers of `make test-all` tell pytest-xdist's controller the
#: group of each test: ``{test id: group}`` (JSON). The controller sets it for its workers.
GROUPS_FILE = "ACCORDKIT_TEST_GROUPS"


def pytest_configure(config: pytest.Config) -> None:
    """In pytest-xdist's controller with ``--dist loadgroup``: name the file the workers
    write the groups to (they inherit the environment)."""
    import tempfile

    if getattr(config.option, "dist", "no") == "loadgroup" and \
            not hasattr(config, "workerinput"):
        folder = Path(tempfile.mkdtemp(prefix="ak-test-groups-"))
        os.environ[GROUPS_FILE] = str(folder / "groups.json")
        config.add_cleanup(lambda: (Path(os.environ.pop(GROUPS_FILE)).unlink(missing_ok=True),
                                    folder.rmdir()))


def _write_groups(session: pytest.Session) -> None:
    """In a worker of `make test-all`: write each grouped test's group for the controller
    (before pytest-xdist sends it the collected ids, with which it schedules)."""
    import json

    target = os.environ.get(GROUPS_FILE)
    if target is None or not hasattr(session.config, "workerinput"):
        return
    groups = {i.nodeid: g for i, g in worker_groups(session.items).items()}
    part = Path(f"{target}.{session.config.workerinput['workerid']}")
    part.write_text(json.dumps(groups, sort_keys=True), encoding="utf-8")
    os.replace(part, target)          # every worker writes the same: the last one stays


@pytest.hookimpl(tryfirst=True, optionalhook=True)    # a hook of pytest-xdist's, if installed
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup`` with the groups of :func:`worker_groups`, read from the file the
    workers wrote. pytest-xdist 3.8 reads ``xdist_group`` marks through a test id that
    pytest 9.2 no longer lets a plugin change (pytest-xdist issue 1386): its own loadgroup
    would spread every group over the workers."""
    if config.getvalue("dist") != "loadgroup" or GROUPS_FILE not in os.environ:
        return None
    from tests.workers import GroupScheduling

    return GroupScheduling(config, log, groups_file=Path(os.environ[GROUPS_FILE]))


_LEFT_OUT = pytest.StashKey[int]()
_RAY_USERS = pytest.StashKey[int]()


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("--fast") and not _fast(config):
        return "fast default: test paths were named, so every test in them runs"
    return None


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    left = config.stash.get(_LEFT_OUT, 0)
    if left:
        terminalreporter.write_line(
            f"fast default: {left} tests that start a kernel, Ray, Chromium or a process "
            f"(markers {', '.join(SLOW_MARKERS)}) were left out; `make test-all` runs them")


#: What the test running now started (the fast default's guard: pytest_runtest_call below).
_STARTED: list[str] = []


def _watch_processes() -> None:
    """Record each notebook sent to a kernel pool and each process started in this process
    (only while the fast default runs): a test that slipped past the markers is named."""
    import concurrent.futures
    import subprocess

    from tests.machinery import started_by

    popen_init = subprocess.Popen.__init__
    submit = concurrent.futures.ProcessPoolExecutor.submit

    def watched_init(self, args, *a, **kw):
        if (marker := started_by(args)) is not None:
            _STARTED.append(f"{marker}: a process ({args if isinstance(args, str) else args[0]})")
        return popen_init(self, args, *a, **kw)

    def watched_submit(self, fn, /, *a, **kw):
        if getattr(fn, "__module__", "").startswith("accordkit.report"):
            _STARTED.append(f"notebook: a notebook for a kernel ({fn.__name__})")
        return submit(self, fn, *a, **kw)

    subprocess.Popen.__init__ = watched_init
    concurrent.futures.ProcessPoolExecutor.submit = watched_submit


@pytest.hookimpl(tryfirst=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _write_groups(session)
    session.config.stash[_RAY_USERS] = sum(
        "ray_cluster" in getattr(i, "fixturenames", ()) for i in session.items)
    if _fast(session.config):
        _watch_processes()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """In the fast default, a test that started a kernel or a process without carrying a
    marker of :data:`SLOW_MARKERS` fails and says what it started (it ran, slowly, where it
    should not have): give it a machinery fixture or add its helper to tests/machinery.py."""
    _STARTED.clear()
    result = yield
    started = list(dict.fromkeys(_STARTED))
    _STARTED.clear()
    if started and _fast(item.config) and \
            not any(item.get_closest_marker(m) for m in SLOW_MARKERS):
        pytest.fail("the fast default ran a test that started " + "; ".join(started)
                    + ". Use a fixture or helper that tests/machinery.py knows (its marker is "
                    "then added), or add this helper to CALLS there", pytrace=False)
    return result


# --- one Ray cluster for tests/engines/test_ray_cluster.py and tests/judges/test_ray_judge.py -

#: A killed node is declared dead after 4 missed health checks 0.5 s apart (Ray's default
#: takes 15 s); nothing else about the cluster differs from Ray's defaults.
FAST_DEATH = {"health_check_period_ms": 500, "health_check_failure_threshold": 4}
#: Nodes of the shared cluster: a head and two workers of one CPU each.
RAY_NODES = 3


class _SharedCluster:
    """The one cluster of the session, started by its first user and stopped after its last
    (tests/conftest.py runs its users one after the other)."""

    cluster = None
    failed: str | None = None
    left = 0


def _with_judge_key(action):
    """Run ``action`` with the judges' fake API key in the environment: the nodes it starts
    inherit it, as nodes started by ``ray start`` inherit the keys of their shell."""
    from tests.judges.episodes import FAKE_KEY

    before = os.environ.get("OPENAI_API_KEY")
    os.environ["OPENAI_API_KEY"] = FAKE_KEY
    try:
        return action()
    finally:
        if before is None:
            os.environ.pop("OPENAI_API_KEY", None)
        else:
            os.environ["OPENAI_API_KEY"] = before


def _start_shared_cluster():
    from accordkit.engines.ray_cluster import LocalCluster

    try:
        cluster = _with_judge_key(lambda: LocalCluster(nodes=RAY_NODES, cpus_per_node=1,
                                                       system_config=FAST_DEATH))
    except Exception as exc:  # noqa: BLE001 - said once, in one line, for every user
        # LocalCluster stopped every process it started before raising (see
        # accordkit/_internal/ray_cluster.py): nothing of it is left to leak into other tests
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
        first = (str(exc).strip().splitlines() or [""])[0][:300]
        _SharedCluster.failed = (
            f"the shared {RAY_NODES}-node Ray cluster did not start ({type(exc).__name__}: "
            f"{first}) with a load average of {load:.1f} on {cores} cores; every process it "
            "started was stopped")
        return None
    print(f"cluster of {RAY_NODES} nodes started in {cluster.start_seconds:.1f} s")
    return cluster


def _stop_shared_cluster() -> None:
    from accordkit.engines.ray_cluster import processes_using

    cluster, _SharedCluster.cluster = _SharedCluster.cluster, None
    if cluster is not None:
        cluster.close()
        assert not processes_using(cluster.temp_dir), "a process of the Ray cluster outlived it"


@pytest.fixture
def ray_cluster(request: pytest.FixtureRequest):
    """The session's cluster of three nodes (a head and two workers of one CPU each, with
    the judges' fake key in their environment), whole again before each test: a worker that
    a test killed is replaced. Started by its first user, stopped (every process of it)
    after its last one, whatever happened.

    When it cannot start, each user is skipped on a loaded machine (load average above the
    number of cores: Ray's start timed out, "RPC error: Deadline Exceeded") and fails
    elsewhere, with one reason naming the error and the load.
    """
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'accordkit[ray]')")
    if _SharedCluster.cluster is None and _SharedCluster.failed is None:
        _SharedCluster.left = request.config.stash.get(_RAY_USERS, 1)
        _SharedCluster.cluster = _start_shared_cluster()
    request.addfinalizer(_after_ray_user)
    if _SharedCluster.failed is not None:
        if os.getloadavg()[0] > (os.cpu_count() or 1):
            pytest.skip(_SharedCluster.failed)
        pytest.fail(_SharedCluster.failed, pytrace=False)
    cluster = _SharedCluster.cluster
    while len(cluster.worker_ids()) < RAY_NODES - 1:
        _with_judge_key(cluster.add_node)
    return cluster


def _after_ray_user() -> None:
    _SharedCluster.left -= 1
    if _SharedCluster.left <= 0:
        _stop_shared_cluster()


@pytest.fixture(scope="session", autouse=True)
def _no_ray_cluster_left():
    """Whatever the order or the selection, the shared cluster is stopped by the end."""
    yield
    _stop_shared_cluster()
