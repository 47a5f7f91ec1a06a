"""``accordkit judge``: exit codes, resuming after a kill, and no key in any artifact."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import datasets
import pytest

import accordkit as ak
from accordkit.judges.cache import JudgeCache
from accordkit.judges.cli import register, run
from accordkit.judges.verdicts import read_verdicts
from accordkit.schema import EPISODE_FEATURES

from .episodes import FAKE_KEY, acb_episode, unfenced
from .stub_server import Fault, last_user_text

REPO = Path(__file__).resolve().parents[2]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="accordkit")
    register(parser.add_subparsers(dest="command"))
    return parser.parse_args(argv)


@pytest.fixture
def source(tmp_path) -> Path:
    """Twelve AgentChangeBench-like episodes saved as a parquet file."""
    recs = [acb_episode(f"ep{i}") for i in range(12)]
    return ak.save(datasets.Dataset.from_list(recs, features=EPISODE_FEATURES),
                   tmp_path / "episodes.parquet")


def argv(source: Path, tmp_path: Path, server, *extra: str) -> list[str]:
    return ["judge", str(source), "--judge", "gsrt", "--model", "openai/stub-judge",
            "--api-base", server.base_url, "--cache", str(tmp_path / "cache"),
            "--price-in", "0.5", "--price-out", "1.5", "--no-progress",
            "-o", str(tmp_path / "out" / "verdicts.parquet"), *extra]


def test_cli_writes_the_table_and_exits_0_then_2_on_errors(source, tmp_path, stub, fake_key,
                                                           capsys):
    server = stub(fault=lambda body, n: Fault("500") if "(ep3)" in last_user_text(body) else None)
    args = parse(argv(source, tmp_path, server, "--max-attempts", "2"))
    assert args.func is run
    assert run(args) == 2
    err = capsys.readouterr().err
    assert "12 items from 12 episodes" in err and "errors 1" in err and "run the same" in err
    v = read_verdicts(tmp_path / "out" / "verdicts.parquet")
    assert len(v) == 12 and v["error"].notna().sum() == 1
    server.fault = None
    assert run(args) == 0
    assert read_verdicts(tmp_path / "out" / "verdicts.parquet")["verdict"].notna().all()
    assert "11 from cache, 1 called" in capsys.readouterr().err


def test_cli_refuses_max_cost_without_a_price(source, tmp_path, stub, fake_key, capsys):
    server = stub()
    base = [a for a in argv(source, tmp_path, server)
            if a not in ("--price-in", "--price-out", "0.5", "1.5")]
    assert run(parse([*base, "--max-cost", "1"])) == 1
    assert "max_cost needs a price" in capsys.readouterr().err
    assert server.n_requests == 0


def test_no_api_key_in_cache_output_or_logs(source, tmp_path, stub, fake_key, capfd):
    faults = {"(ep1)": Fault("401"), "(ep2)": Fault("500")}
    server = stub(fault=lambda body, n: next((f for tag, f in faults.items()
                                              if tag in last_user_text(body)), None))
    assert run(parse(argv(source, tmp_path, server, "--max-attempts", "2"))) == 2
    out, err = capfd.readouterr()
    # the key was really used (sent to the provider) ...
    assert any(FAKE_KEY in value for h in server.headers_seen for value in h.values())
    # ... and the server echoed it back in an error message, which was scrubbed
    v = read_verdicts(tmp_path / "out" / "verdicts.parquet")
    assert "[REDACTED]" in v.set_index("episode_id").loc["agentchangebench/ep1", "error"]
    artifacts = [p for p in tmp_path.rglob("*") if p.is_file() and p != source]
    assert len(artifacts) >= 11
    for path in artifacts:
        assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert FAKE_KEY not in out + err


@pytest.mark.slow
def test_killed_run_resumes_without_re_requesting_stored_items(source, tmp_path, stub, fake_key):
    server = stub(latency=0.15)
    cache_dir = tmp_path / "cache"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-c", "import sys; from accordkit.cli import main; "
           "sys.exit(main(sys.argv[1:]))",
           *argv(source, tmp_path, server, "--concurrency", "2")]
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    cache = JudgeCache(cache_dir)
    deadline = time.monotonic() + 120
    while len(cache) < 4 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    with proc.stderr:                       # closed after reading: no ResourceWarning
        err = proc.stderr.read().decode()[-2000:]
    assert proc.returncode == -signal.SIGKILL, err
    assert not (tmp_path / "out" / "verdicts.parquet").exists()
    stored = {unfenced(json.loads(p.read_text())["messages"][1]["content"])
              for p in JudgeCache(cache_dir).entries()}
    assert 4 <= len(stored) < 12
    first = server.n_requests
    assert run(parse(argv(source, tmp_path, server, "--concurrency", "4"))) == 0
    asked = [unfenced(t) for t in server.request_texts()[first:]]   # another process
    assert not stored & set(asked)            # nothing stored was requested again
    assert len(asked) == 12 - len(stored)
    v = read_verdicts(tmp_path / "out" / "verdicts.parquet")
    assert len(v) == 12 and v["verdict"].notna().all()


@pytest.mark.slow
def test_two_runs_sharing_a_cache_pay_for_each_request_once(source, tmp_path, stub, fake_key):
    """Two `accordkit judge` processes started together on the same episodes and cache
    folder: the stand-in server is asked each request once (issue 33, one cache)."""
    import re

    server = stub(latency=0.3)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    procs = []
    for i in (1, 2):
        args = argv(source, tmp_path, server, "--concurrency", "3")
        args[args.index("-o") + 1] = str(tmp_path / f"out{i}.parquet")
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "import sys; from accordkit.cli import main; "
             "sys.exit(main(sys.argv[1:]))", *args],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    errs = [p.communicate(timeout=300)[1].decode() for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    assert server.n_requests == 12
    called = [int(re.search(r"(\d+) called", e).group(1)) for e in errs]
    assert sum(called) == 12 and all("requests 12:" in e for e in errs)
    tables = [read_verdicts(tmp_path / f"out{i}.parquet").drop(columns="cached_at")
              for i in (1, 2)]
    assert tables[0].equals(tables[1])
    assert not list((tmp_path / "cache").rglob("*.claim"))      # every claim released


def test_a_claim_left_by_an_interrupted_run_of_this_process_is_taken_over(tmp_path):
    from accordkit.judges.cache import live_run

    cache = JudgeCache(tmp_path)
    with live_run() as first:
        assert cache.claim("gsrt", "ab" * 32, run=first)
        with live_run() as second:
            assert not cache.claim("gsrt", "ab" * 32, run=second)   # the first still runs
    # the first run ended without releasing (interrupted in a notebook kernel)
    with live_run() as third:
        assert cache.claim("gsrt", "ab" * 32, run=third)
        cache.release("gsrt", "ab" * 32, run=third)
    assert not cache.claim_path("gsrt", "ab" * 32).exists()


# --------------------------------------------------------------------------- usage errors


@pytest.mark.parametrize("extra", [
    ["--api-key", FAKE_KEY],
    [f"--api-key={FAKE_KEY}"],
    ["--concurrency", FAKE_KEY],
    ["--max-cost", f"x'{FAKE_KEY}\""],
    ["--errors", FAKE_KEY],
    ["--no-progress=" + FAKE_KEY],
    ["--judge"],                          # given again without a value
])
def test_usage_errors_exit_64_and_never_print_option_values(extra, capsys):
    from accordkit.cli import USAGE_ERROR, main

    argv = ["judge", "x.json", "--judge", "gsrt", "--model", "m", "-o", "v.parquet", *extra]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == USAGE_ERROR == 64
    err = capsys.readouterr().err
    assert "error:" in err and FAKE_KEY not in err and "sk-" not in err


def test_unknown_options_are_named_without_their_values(capsys):
    from accordkit.cli import main

    with pytest.raises(SystemExit):
        main(["score", "x.json", "--api-key", FAKE_KEY, "--token=abc"])
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == ("accordkit: error: unrecognized option(s): --api-key --token "
                   "(1 other argument not shown)")


def test_the_usage_exit_code_is_documented_and_differs_from_run_again():
    from accordkit.cli import USAGE_ERROR, build_parser
    from accordkit.judges.cli import DESCRIPTION

    assert "64 usage error" in build_parser().format_help()
    assert "64 usage error" in DESCRIPTION and "2 some items" in DESCRIPTION
    assert USAGE_ERROR not in (0, 1, 2, 130)


def test_cli_refuses_an_unwritable_cache_in_one_line_before_any_request(source, tmp_path, stub,
                                                                        fake_key, capsys):
    server = stub()
    blocked = tmp_path / "cache"
    blocked.write_text("a file, not a folder")
    args = parse(["judge", str(source), "--judge", "gsrt", "--model", "openai/stub",
                  "--api-base", server.base_url, "--price-in", "1", "--price-out", "1",
                  "--cache", str(blocked), "--no-progress", "-o", str(tmp_path / "v.parquet")])
    assert run(args) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not writable" in err[0] and "nothing was sent" in err[0]
    assert server.n_requests == 0
