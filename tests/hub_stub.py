"""A stand-in for the Hugging Face hub on 127.0.0.1, for tests that load ``org/name`` ids.

Standard library only (``http.server`` in a thread). It serves dataset repositories from
local folders and answers the endpoints that ``datasets`` and ``huggingface_hub`` call when
they load a dataset by hub id:

* ``GET /api/datasets/{repo}`` and ``/api/datasets/{repo}/revision/{rev}``: dataset info
  (``sha``, ``siblings``);
* ``GET /api/datasets/{repo}/tree/{rev}[/{path}]``: folder listing (``recursive``);
* ``POST /api/datasets/{repo}/paths-info/{rev}``: information on given paths;
* ``HEAD`` / ``GET /datasets/{repo}/resolve/{rev}/{path}``: file bytes, with the
  ``X-Repo-Commit``, ``ETag`` and ``Content-Length`` headers and ``Range`` support.

Errors carry the ``X-Error-Code`` header (``RepoNotFound``, ``RevisionNotFound``,
``EntryNotFound``) that ``huggingface_hub`` turns into its exception types. Every request
is logged in :attr:`HubStub.requests` so that tests can check what was fetched.

Examples
--------
>>> stub = HubStub({"org/name": {"main": folder}})              # doctest: +SKIP
>>> with stub:                                                   # doctest: +SKIP
...     print(stub.endpoint)                                     # http://127.0.0.1:PORT
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["HubStub"]

_API = re.compile(r"^/api/datasets/(?P<repo>[^/]+/[^/]+)"
                  r"(?:/(?P<kind>revision|tree|paths-info)(?:/(?P<rest>.*))?)?$")
_RESOLVE = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")


def _sha(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()  # noqa: S324 - a stand-in for git object ids


class _Revision:
    """One commit of a repository: a folder of files and a commit hash derived from them."""

    def __init__(self, folder: Path) -> None:
        self.files: dict[str, bytes] = {
            p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()
        }
        digest = hashlib.sha1()  # noqa: S324
        for name, data in self.files.items():
            digest.update(name.encode() + b"\0" + data)
        self.commit = digest.hexdigest()

    def dirs(self) -> set[str]:
        out: set[str] = set()
        for name in self.files:
            parts = name.split("/")[:-1]
            out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return out

    def entry(self, path: str) -> dict[str, Any] | None:
        if path in self.files:
            data = self.files[path]
            return {"type": "file", "path": path, "size": len(data), "oid": _sha(data)}
        if path in self.dirs():
            return {"type": "directory", "path": path, "oid": _sha(path.encode())}
        return None


class HubStub:
    """Serve dataset repositories from local folders on ``http://127.0.0.1:<port>``.

    Parameters
    ----------
    repos : dict
        ``{"org/name": {"main": folder, "v1": other_folder, ...}}``: each revision name
        (a branch or tag) points to a folder whose files are that revision's content.
        A revision is also reachable by its commit hash (:meth:`commit`).
    """

    def __init__(self, repos: dict[str, dict[str, Path]]) -> None:
        self.repos = {repo: {rev: _Revision(Path(folder)) for rev, folder in revs.items()}
                      for repo, revs in repos.items()}
        self.requests: list[tuple[str, str]] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle

    @property
    def endpoint(self) -> str:
        assert self._server is not None, "start() the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def commit(self, repo: str, revision: str = "main") -> str:
        """The commit hash the stub reports for ``repo`` at ``revision``."""
        return self.repos[repo][revision].commit

    def start(self) -> HubStub:
        stub = self

        class Handler(_Handler):
            hub = stub

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> HubStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ------------------------------------------------------------------ lookups

    def find(self, repo: str, rev: str) -> _Revision | str:
        """The revision, or the error code to answer with."""
        revs = self.repos.get(repo)
        if revs is None:
            return "RepoNotFound"
        rev = unquote(rev)
        if rev in revs:
            return revs[rev]
        for candidate in revs.values():
            if candidate.commit == rev:
                return candidate
        return "RevisionNotFound"


class _Handler(BaseHTTPRequestHandler):
    hub: HubStub
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
        pass

    # ------------------------------------------------------------------ responses

    def _send(self, status: int, body: bytes = b"", *, headers: dict[str, str] | None = None,
              head: bool = False, content_type: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _json(self, obj: Any, *, head: bool = False) -> None:
        self._send(200, json.dumps(obj).encode(), head=head)

    def _error(self, code: str, *, head: bool = False) -> None:
        status = 401 if code == "RepoNotFound" else 404
        body = json.dumps({"error": code}).encode()
        self._send(status, body, headers={"X-Error-Code": code, "X-Error-Message": code},
                   head=head)

    # ------------------------------------------------------------------ verbs

    def do_HEAD(self) -> None:  # noqa: N802 - http.server naming
        self._dispatch(head=True)

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch(head=False)

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode() if length else ""
        self._dispatch(head=False, body=body)

    def _dispatch(self, *, head: bool, body: str = "") -> None:
        url = urlsplit(self.path)
        self.hub.requests.append((self.command, url.path))
        query = parse_qs(url.query)
        if m := _RESOLVE.match(url.path):
            return self._resolve(m["repo"], m["rev"], unquote(m["path"]), head=head)
        if m := _API.match(url.path):
            kind, rest = m["kind"], m["rest"] or ""
            if kind in (None, "revision"):
                return self._info(m["repo"], unquote(rest) or "main", head=head)
            rev, _, path = rest.partition("/")
            if kind == "tree":
                recursive = query.get("recursive", ["false"])[0].lower() == "true"
                return self._tree(m["repo"], rev, unquote(path).strip("/"), recursive=recursive)
            return self._paths_info(m["repo"], rev, body)
        self._error("RepoNotFound", head=head)

    def _info(self, repo: str, rev: str, *, head: bool) -> None:
        found = self.hub.find(repo, rev)
        if isinstance(found, str):
            return self._error(found, head=head)
        self._json({"id": repo, "_id": repo, "sha": found.commit, "private": False,
                    "disabled": False, "gated": False, "downloads": 0, "likes": 0,
                    "tags": [], "lastModified": "2026-01-01T00:00:00.000Z",
                    "createdAt": "2026-01-01T00:00:00.000Z",
                    "siblings": [{"rfilename": n} for n in found.files]}, head=head)

    def _tree(self, repo: str, rev: str, path: str, *, recursive: bool) -> None:
        found = self.hub.find(repo, rev)
        if isinstance(found, str):
            return self._error(found)
        if path and path not in found.dirs():
            return self._error("EntryNotFound")
        prefix = f"{path}/" if path else ""
        names = sorted(set(found.files) | found.dirs())
        out = []
        for name in names:
            if not name.startswith(prefix):
                continue
            if not recursive and "/" in name[len(prefix):]:
                continue
            out.append(found.entry(name))
        self._json(out)

    def _paths_info(self, repo: str, rev: str, body: str) -> None:
        found = self.hub.find(repo, rev)
        if isinstance(found, str):
            return self._error(found)
        try:
            paths = json.loads(body).get("paths", [])
        except json.JSONDecodeError:
            paths = parse_qs(body).get("paths", [])
        if isinstance(paths, str):
            paths = [paths]
        self._json([e for p in paths if (e := found.entry(p.strip("/"))) is not None])

    def _resolve(self, repo: str, rev: str, path: str, *, head: bool) -> None:
        found = self.hub.find(repo, rev)
        if isinstance(found, str):
            return self._error(found, head=head)
        data = found.files.get(path)
        if data is None:
            return self._error("EntryNotFound", head=head)
        headers = {"X-Repo-Commit": found.commit, "ETag": f'"{_sha(data)}"',
                   "Accept-Ranges": "bytes"}
        status = 200
        rng = self.headers.get("Range")
        if rng and not head and (m := re.match(r"bytes=(\d*)-(\d*)$", rng.strip())):
            start = int(m[1]) if m[1] else max(len(data) - int(m[2]), 0)
            end = int(m[2]) if m[1] and m[2] else len(data) - 1
            end = min(end, len(data) - 1)
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            data, status = data[start:end + 1], 206
        self._send(status, data, headers=headers, head=head,
                   content_type="application/octet-stream")


def use_hub(monkeypatch: Any, endpoint: str | None, hf_home: Path) -> None:
    """Point ``huggingface_hub`` and ``datasets`` at ``endpoint`` (None: stay offline), with
    every cache under ``hf_home``, for one test.

    Both libraries read the environment once, at import time, so the module constants are
    patched as well as the environment; ``monkeypatch`` restores all of them afterwards.
    ``HF_HUB_OFFLINE`` is lifted only when an endpoint is given. The stand-in has no dataset
    viewer, so ``datasets`` is told not to ask one for exported dataset infos (it would
    look up ``datasets-server.<host>``, which is not a loopback address).
    """
    import datasets.config as dconfig
    import huggingface_hub.constants as hconst

    hf_home = Path(hf_home)
    paths = {
        "HF_HOME": hf_home, "HF_HUB_CACHE": hf_home / "hub",
        "HUGGINGFACE_HUB_CACHE": hf_home / "hub", "HF_ASSETS_CACHE": hf_home / "assets",
        "HF_XET_CACHE": hf_home / "xet", "HF_TOKEN_PATH": hf_home / "token",
        "HF_STORED_TOKENS_PATH": hf_home / "stored_tokens",
        "AGENT_HARNESSES_PATH": hf_home / ".agent_harnesses.json",
        "CHECK_FOR_UPDATE_DONE_PATH": hf_home / ".check_for_update_done",
        "CHECK_FOR_SKILL_UPDATE_DONE_PATH": hf_home / ".check_for_skill_update_done",
    }
    for name, value in paths.items():
        if hasattr(hconst, name):
            monkeypatch.setattr(hconst, name, str(value))
    monkeypatch.setattr(dconfig, "HF_CACHE_HOME", str(hf_home))
    monkeypatch.setattr(dconfig, "HF_DATASETS_CACHE", hf_home / "datasets")
    monkeypatch.setattr(dconfig, "HF_MODULES_CACHE", hf_home / "modules")
    monkeypatch.setattr(dconfig, "DOWNLOADED_DATASETS_PATH", hf_home / "datasets" / "downloads")
    monkeypatch.setattr(dconfig, "EXTRACTED_DATASETS_PATH",
                        hf_home / "datasets" / "downloads" / "extracted")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.delenv("HF_TOKEN", raising=False)  # never send a token to the stand-in
    monkeypatch.setattr(hconst, "HF_HUB_DISABLE_IMPLICIT_TOKEN", True)
    if endpoint is None:
        return
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setattr(hconst, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(dconfig, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(dconfig, "HF_DATASETS_OFFLINE", False)
    monkeypatch.setattr(hconst, "ENDPOINT", endpoint)
    monkeypatch.setattr(hconst, "HUGGINGFACE_CO_URL_TEMPLATE",
                        endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(dconfig, "HF_ENDPOINT", endpoint)
    monkeypatch.setattr(dconfig, "HUB_DATASETS_URL",
                        endpoint + "/datasets/{repo_id}/resolve/{revision}/{path}")
    monkeypatch.setattr(dconfig, "USE_PARQUET_EXPORT", False)
