"""A stand-in OpenAI-compatible chat-completions server for the judge tests.

Standard library only (``http.server`` + threads). It answers ``POST /v1/chat/completions``
on 127.0.0.1 and can inject, per request, the faults a real provider produces: latency,
429 with ``Retry-After``, 500, a hang longer than the client's timeout, and garbage output.

Every request is recorded (``server.requests``), so tests can count calls and check that an
item is never requested twice.

Examples
--------
>>> server = StubServer(answer=lambda body: "yes").start()   # doctest: +SKIP
>>> server.base_url                                          # doctest: +SKIP
'http://127.0.0.1:40123/v1'
>>> server.stop()                                            # doctest: +SKIP
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """One injected failure.

    kind : {"429", "500", "401", "hang", "garbage", "bad_body"}
        ``"429"`` answers Too Many Requests with ``Retry-After: retry_after``; ``"500"`` an
        internal error; ``"401"`` refuses the key and echoes it in the error message (as a
        careless server might); ``"hang"`` sleeps ``seconds`` before answering (longer than the
        client timeout); ``"garbage"`` answers 200 with unparseable judge text;
        ``"echo_key"`` answers 200 with the request's ``Authorization`` header echoed in the
        ``model`` field, the reply text and a response header (a hostile proxy);
        ``"no_usage"`` / ``"negative_usage"`` answer 200 without ``usage`` / with negative
        token counts; ``"empty_choices"`` / ``"null_content"`` answer 200 with ``choices: []``
        / ``content: null``;
        ``"bad_body"`` answers 200 with a body that is not JSON.
    """

    kind: str
    retry_after: float | None = None
    seconds: float = 0.0


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat-completions request body."""
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            if isinstance(content, list):  # content parts
                return "".join(p.get("text", "") for p in content if isinstance(p, dict))
            return content or ""
    return ""


class StubServer:
    """Threaded stand-in server; see the module docstring.

    Parameters
    ----------
    answer : callable, optional
        ``answer(body) -> str``: the judge's reply text for a request body (default ``"yes"``).
    latency : float
        Seconds every answer waits before it is sent.
    fault : callable, optional
        ``fault(body, n) -> Fault | None`` where ``n`` is how many times the same request
        (same last user message and model) has been seen before, so a fault can hit only
        the first attempts.
    """

    def __init__(self, *, answer: Callable[[dict[str, Any]], str] | None = None,
                 latency: float = 0.0,
                 fault: Callable[[dict[str, Any], int], Fault | None] | None = None) -> None:
        self.answer = answer or (lambda body: "yes")
        self.latency = latency
        self.fault = fault
        self.requests: list[dict[str, Any]] = []
        self.headers_seen: list[dict[str, str]] = []
        self.times: list[float] = []
        self._seen: Counter[tuple[str, str]] = Counter()
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> StubServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server._handle(self, body)

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            request_queue_size = 256  # the default 5 drops connections under concurrency

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def n_requests(self) -> int:
        with self._lock:
            return len(self.requests)

    def request_texts(self) -> list[str]:
        with self._lock:
            return [last_user_text(b) for b in self.requests]

    # ------------------------------------------------------------------ handling
    def _handle(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        key = (str(body.get("model")), last_user_text(body))
        with self._lock:
            self.requests.append(body)
            self.headers_seen.append(dict(handler.headers.items()))
            self.times.append(time.monotonic())
            seen = self._seen[key]
            self._seen[key] += 1
        fault = self.fault(body, seen) if self.fault else None
        if self.latency:
            time.sleep(self.latency)
        if fault is not None and fault.kind == "429":
            headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
            return _send(handler, 429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                         headers)
        if fault is not None and fault.kind == "401":
            key = handler.headers.get("Authorization") or ""
            return _send(handler, 401, {"error": {"message": f"Incorrect API key: {key}",
                                                  "type": "invalid_request_error"}})
        if fault is not None and fault.kind == "echo_key":
            echo = f"echo {handler.headers.get('Authorization') or ''}"
            payload = {"id": echo, "object": "chat.completion", "created": int(time.time()),
                       "model": echo, "system_fingerprint": echo,
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": echo}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 10,
                                 "total_tokens": 20}}
            return _send(handler, 200, payload, {"X-Echo": echo})
        if fault is not None and fault.kind == "500":
            return _send(handler, 500, {"error": {"message": "boom", "type": "server_error"}})
        if fault is not None and fault.kind == "hang":
            time.sleep(fault.seconds)
        if fault is not None and fault.kind == "bad_body":
            return _send_raw(handler, 200, b"<html>not json</html>", "text/html")
        text = "\x00%%garbage%% }{" if fault is not None and fault.kind == "garbage" \
            else self.answer(body)
        n_in = sum(len(str(m.get("content") or "")) for m in body.get("messages") or []) // 4
        kind = fault.kind if fault is not None else None
        payload: dict[str, Any] = {
            "id": f"stub-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": n_in, "completion_tokens": max(1, len(text) // 4),
                      "total_tokens": n_in + max(1, len(text) // 4)},
        }
        if kind == "no_usage":
            del payload["usage"]
        elif kind == "negative_usage":
            payload["usage"] = {"prompt_tokens": -254_000_000, "completion_tokens": -5,
                                "total_tokens": -254_000_005}
        elif kind == "empty_choices":
            payload["choices"] = []
        elif kind == "null_content":
            payload["choices"][0]["message"]["content"] = None
        _send(handler, 200, payload)

    def __enter__(self) -> StubServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any],
          headers: dict[str, str] | None = None) -> None:
    _send_raw(handler, status, json.dumps(payload).encode(), "application/json", headers)


def _send_raw(handler: BaseHTTPRequestHandler, status: int, data: bytes, ctype: str,
              headers: dict[str, str] | None = None) -> None:
    # Status line, headers and body go out in one write: separate small writes meet the
    # client's delayed ACK (Nagle) and add ~40 ms to every answer.
    head = [f"HTTP/1.1 {status} {handler.responses.get(status, ('',))[0]}",
            f"Content-Type: {ctype}", f"Content-Length: {len(data)}"]
    head += [f"{k}: {v}" for k, v in (headers or {}).items()]
    try:
        handler.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        handler.wfile.flush()
    except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
        pass


def main(argv: list[str] | None = None) -> None:
    """Run a stub server in its own process: ``python stub_server.py --latency 0.2``.

    Prints the base URL on the first line of stdout, then serves until killed.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--answer", default="yes", help="fixed reply text")
    args = parser.parse_args(argv)
    server = StubServer(answer=lambda body: args.answer, latency=args.latency).start()
    print(server.base_url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        sys.exit(0)


if __name__ == "__main__":
    main()
