"""Which machinery a test starts, read from the fixtures it uses and the code it runs.

``make test`` is the fast default: it leaves out the tests that start a papermill kernel, a
Ray cluster, Chromium or a new process (seconds to minutes each); ``make test-all`` runs them
too. Nobody marks such a test by hand: :func:`machinery_of` finds what it starts, and
tests/conftest.py adds the markers (issue 42), so that a new test cannot forget.

A test starts a machine when it, one of its fixtures, or a function of tests/ that either
calls (followed to any depth) uses

* a fixture of :data:`FIXTURES` (the shared reports, the Ray cluster, the browser), or
* a callable of :data:`CALLS` (``build_report``, ``papermill.execute_notebook``,
  ``ray.init``, ``sync_playwright``, ``LocalCluster`` ...), found by resolving the names its
  bytecode loads, local imports included, or
* a ``subprocess`` call, unless its code names only one of :data:`QUICK_TOOLS`, or
* the Ray engine (the strings ``"ray"`` and ``"engine"``/``"--engine"`` in its code).

What this reading cannot see (the report command run in-process, ``main(["report", ...])``,
starts kernels only when a notebook applies) the fast default catches as it runs: a test
without the marker that submits a notebook to a kernel or starts a process other than a
quick tool fails, saying which marker it needs (tests/conftest.py, :func:`started_by`).
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

TESTS = Path(__file__).resolve().parent

#: The markers, each with what it stands for (registered in pyproject.toml).
MARKERS = {
    "notebook": "runs report notebooks in papermill kernels",
    "ray": "starts Ray (a local Ray or a cluster of several nodes)",
    "browser": "drives headless Chromium",
    "cli": "starts a Python interpreter, a shell or the accordkit command in a new process",
}

#: Fixtures that start a machine, by marker.
FIXTURES: dict[str, frozenset[str]] = {
    "notebook": frozenset({"sample_report", "fixture_report", "tau2_report", "hostile_report",
                           "report_command"}),
    "ray": frozenset({"ray_cluster"}),
    "browser": frozenset({"browser", "visit"}),
    "cli": frozenset(),
}

#: ``module:attribute`` of the callables that start a machine, by marker.
CALLS: dict[str, tuple[str, ...]] = {
    "notebook": ("accordkit.report.runner:build_report", "papermill:execute_notebook",
                 "accordkit.report.execute:execute_notebook"),
    "ray": ("ray:init", "accordkit._internal.ray_cluster:LocalCluster",
            "accordkit._internal.ray_cluster:ray_session"),
    "browser": ("playwright.sync_api:sync_playwright",),
    "cli": (),
}

#: Programs quick enough for the fast default when a test runs nothing else in a process.
QUICK_TOOLS = frozenset({"git", "ruff", "make"})
_SUBPROCESS = ("run", "Popen", "check_output", "check_call", "call")


class _Unloaded:
    """A module the test imports that is not imported yet, or an attribute of one: known
    by its dotted path (importing it here would slow every collection down)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __getattr__(self, attr: str) -> _Unloaded:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Unloaded(f"{self.path}.{attr}")


def _module(name: str) -> Any:
    """The module ``name``: as imported so far, or imported now when it is accordkit's or the
    tests', else an :class:`_Unloaded` (third-party modules are not imported here)."""
    if name in sys.modules:
        return sys.modules[name]
    if name.split(".")[0] in ("accordkit", "tests"):        # ours: imported to follow it
        try:
            return importlib.import_module(name)
        except ImportError:
            return None
    return _Unloaded(name)


def known_calls() -> tuple[dict[int, str], dict[str, str]]:
    """The callables of :data:`CALLS` and ``subprocess``: ids of those already imported
    (accordkit's are imported now), dotted paths for the others."""
    import accordkit._internal.ray_cluster  # noqa: F401
    import accordkit.report.runner  # noqa: F401 - its build_report, by identity

    specs = {spec: marker for marker, entries in CALLS.items() for spec in entries}
    specs.update({f"subprocess:{name}": "subprocess" for name in _SUBPROCESS})
    by_id, by_path = {}, {}
    for spec, marker in specs.items():
        module, _, attr = spec.partition(":")
        by_path[f"{module}.{attr}"] = marker
        if module in sys.modules and hasattr(sys.modules[module], attr):
            by_id[id(getattr(sys.modules[module], attr))] = marker
    return by_id, by_path


class _Direct:
    """What one code object uses by itself: known callables, string constants, and the
    functions of tests/ it calls (followed by :func:`_uses`)."""

    __slots__ = ("found", "strings", "callees")

    def __init__(self) -> None:
        self.found: set[str] = set()
        self.strings: set[str] = set()
        self.callees: list[types.FunctionType] = []


_DIRECT: dict[int, _Direct] = {}
_TESTS_PREFIX = str(TESTS) + "/"


def _direct(code: types.CodeType, globs: dict[str, Any], known: tuple[dict, dict]) -> _Direct:
    """The :class:`_Direct` of ``code`` and the code objects nested in it (memoized).

    Read from the names the code loads (``co_names``: globals, attributes, imported modules
    and their members) rather than instruction by instruction: every module it names is
    looked into for every name it loads, which finds ``subprocess.run``, ``pm.execute_notebook``
    after ``import papermill as pm`` and ``from accordkit.report.runner import build_report``
    alike, at a fraction of the cost of decoding the bytecode.
    """
    if id(code) in _DIRECT:
        return _DIRECT[id(code)]
    by_id, by_path = known
    out = _DIRECT[id(code)] = _Direct()
    package = globs.get("__package__")
    names: set[str] = set()
    todo = [code]
    while todo:
        one = todo.pop()
        names.update(one.co_names)
        stack = list(one.co_consts)      # strings, keyword names, nested code objects
        while stack:
            v = stack.pop()
            if isinstance(v, str):
                out.strings.add(v)
            elif isinstance(v, (tuple, frozenset)):
                stack.extend(v)
            elif isinstance(v, types.CodeType):
                todo.append(v)
    objects = [globs[n] if n in globs else getattr(builtins, n, None) for n in names]
    roots = {path.split(".")[0] for path in by_path}
    for name in names:
        if name in globs:
            continue
        # a module imported in the function (maybe relatively), or not: a local's attribute
        relative = sys.modules.get(f"{package}.{name}") if package else None
        if relative is not None:
            objects.append(relative)
        elif name in sys.modules or name.split(".")[0] in ("accordkit", "tests"):
            objects.append(_module(name))
        elif name.split(".")[0] in roots:
            objects.append(_Unloaded(name))
    modules = [o for o in objects if isinstance(o, (types.ModuleType, _Unloaded))]
    prefixes = {p.rsplit(".", i)[0] for p in by_path for i in range(p.count(".") + 1)}
    seen_modules: set[Any] = set()
    while modules:
        module = modules.pop()
        key = module.path if isinstance(module, _Unloaded) else id(module)
        if key in seen_modules:
            continue
        seen_modules.add(key)
        for name in names:
            member = _member(module, name)
            if isinstance(member, _Unloaded) and member.path not in prefixes:
                continue            # not on the way to a known callable
            if member is not None:
                objects.append(member)
                if isinstance(member, (types.ModuleType, _Unloaded)):
                    modules.append(member)
    for obj in objects:
        if obj is None:
            continue
        marker = by_path.get(obj.path) if isinstance(obj, _Unloaded) else by_id.get(id(obj))
        if marker:
            out.found.add(marker)
        # a function of tests/ (a helper, a payload builder): followed into
        if isinstance(obj, types.FunctionType) and obj.__code__.co_filename != __file__ \
                and obj.__code__.co_filename.startswith(_TESTS_PREFIX):
            out.callees.append(obj)
    return out


def _member(module: Any, name: str) -> Any:
    """``module.name``, or None; quietly (a module's ``__getattr__`` may warn of a
    deprecated name, or raise)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return getattr(module, name, None)
        except Exception:  # noqa: BLE001 - a lazy attribute that fails to load: not ours
            return None


def _uses(func: Callable[..., Any], known: tuple[dict, dict],
          ) -> tuple[set[str], set[str]]:
    """Known callables and string constants reached from ``func``, its helpers followed."""
    found: set[str] = set()
    strings: set[str] = set()
    seen: set[int] = set()
    todo = [inspect.unwrap(func)]
    while todo:
        f = todo.pop()
        code = getattr(f, "__code__", None)
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        d = _direct(code, getattr(f, "__globals__", {}), known)
        found |= d.found
        strings |= d.strings
        todo.extend(d.callees)
    return found, strings


def machinery_of(functions: Iterable[Callable[..., Any]], fixturenames: Iterable[str], *,
                 known: tuple[dict[int, str], dict[str, str]] | None = None,
                 params: dict[str, Any] | None = None) -> set[str]:
    """The markers of :data:`MARKERS` a test needs.

    Parameters
    ----------
    functions : iterable of callables
        The test function and the functions of the fixtures it uses.
    fixturenames : iterable of str
        The names of every fixture it uses (its closure).
    known : optional
        What :func:`known_calls` returns (computed once per collection by the caller).
    params : dict, optional
        The test's parameters: ``num_proc`` above 1 spawns worker interpreters (``cli``).
    """
    known = known or known_calls()
    markers = {m for m, fixtures in FIXTURES.items() if set(fixturenames) & fixtures}
    found: set[str] = set()
    strings: set[str] = set()
    for func in functions:
        f, s = _uses(func, known)
        found |= f
        strings |= s
    markers |= found & set(MARKERS)
    if isinstance((params or {}).get("num_proc"), int) and params["num_proc"] > 1:
        markers.add("cli")
    if "subprocess" in found and not strings & QUICK_TOOLS:
        markers.add("cli")
    if "ray" in strings and strings & {"engine", "--engine"}:
        markers.add("ray")
    return markers


#: Programs the fast default's guard stops: interpreters, shells, the accordkit command,
#: kernels, Ray's processes and browsers (a library asking ``uname`` or ``pandoc`` is not).
HEAVY = re.compile(r"^(python[\d.]*|bash|sh|dash|zsh|accordkit|jupyter.*|ipykernel.*|papermill"
                   r"|chrom(e|ium)[\w-]*|headless_shell|node|ray|raylet|gcs_server)$")


def started_by(args: Any) -> str | None:
    """The marker a new process needs (``"cli"``) when it is one of :data:`HEAVY`, else
    None; ``args`` as given to ``subprocess.Popen``."""
    first = args if isinstance(args, (str, bytes, Path)) else next(iter(args), "")
    first = os.fsdecode(first) if isinstance(first, (bytes, Path)) else str(first)
    name = Path(first.split()[0] if first.strip() else first).name
    return "cli" if HEAVY.match(name) else None
