"""The real `racing-demon serve` process for the tests and the bench: start it on a free
loopback port with a data folder, read its address from the first line it prints, kill it
(SIGKILL included) and start it again on the same folder; and the commands a player runs
on what it downloads (``verify``, ``audit --receipts --against``).

Tests skip, with the reason, only while ``racing_demon.serve`` is not importable: the
server is built in other branches and merged after them.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from racing_demon.log.receipts import check_receipt_line, record_reference
from racing_demon.profiles import builtin_document

from .player import api, http

SERVE_MISSING = importlib.util.find_spec("racing_demon.serve") is None
needs_server = pytest.mark.skipif(
    SERVE_MISSING,
    reason="racing_demon.serve is not importable: the server (issue 31) is not merged yet",
)

_LISTENING = re.compile(rb"listening on (http://127\.0\.0\.1:(\d+))")
# What runs ``serve``: the package's command line, or a test harness in its place.
RACING_DEMON: tuple[str, ...] = ("-m", "racing_demon")
BOUNCING: tuple[str, ...] = (str(Path(__file__).with_name("bouncing_serve.py")),)
START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
CLI_TIMEOUT = 180.0


def one_hand_rules(profile: str = "nertz") -> dict[str, Any]:
    """A built-in profile cut to one hand that a seat may end by resigning (nertz: no tie
    window, so a lost race is a bounce; no countdown): a hand of hard bots lasts about a
    minute, so the tests end it sooner with a person's ``resign``."""
    document = builtin_document(profile)
    document["name"] = f"{profile}-one-hand"
    document["match"]["target"] = None
    document["match"]["max_hands"] = 1
    document["end"]["resign"] = "ends_match"
    return document


@dataclass
class Server:
    """One server process on ``data``; ``start`` again after ``kill`` resumes its tables."""

    data: Path
    logs: Path  # where its stdout and stderr go, one pair per start
    process: subprocess.Popen[bytes] | None = None
    base: str = ""
    port: int = 0
    starts: int = 0
    extra: Sequence[str] = field(default_factory=tuple)
    program: Sequence[str] = RACING_DEMON

    def start(self, port: int | None = None) -> None:
        """Start on ``port`` (by default the last one, else a free one) and wait for its
        ``listening on http://HOST:PORT`` line."""
        self.logs.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        out = self.logs / f"serve-{self.starts}.out"
        err = self.logs / f"serve-{self.starts}.err"
        wanted = self.port if port is None else port
        command = [
            sys.executable,
            *self.program,
            "serve",
            "--data",
            str(self.data),
            "--host",
            "127.0.0.1",
            "--port",
            str(wanted),
            *self.extra,
        ]
        with out.open("wb") as stdout, err.open("wb") as stderr:
            self.process = subprocess.Popen(
                command, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            first = out.read_bytes().split(b"\n", 1)
            found = _LISTENING.search(first[0]) if len(first) > 1 else None
            if found:
                self.base = found.group(1).decode()
                self.port = int(found.group(2))
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(
            f"serve did not start (exit {self.process.returncode}):\n"
            f"{out.read_text(errors='replace')}\n{err.read_text(errors='replace')}"
        )

    def restart(self) -> None:
        """Start again on the same data folder, on the same port if it is free."""
        try:
            self.start(self.port)
        except RuntimeError:
            self.start(0)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def kill(self) -> None:
        """SIGKILL: nothing gets a chance to flush or close."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT)

    def terminate(self) -> None:
        """SIGTERM, as a service manager asks for a restart: a planned stop (it drains)."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)

    def interrupt(self) -> None:
        """SIGINT (Ctrl-C), without waiting."""
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)

    def wait(self, timeout: float) -> int:
        """The exit code, once the process ends (``subprocess.TimeoutExpired`` if not in
        ``timeout`` seconds)."""
        assert self.process is not None
        return self.process.wait(timeout)

    def stop(self) -> int | None:
        """Ctrl-C (SIGINT), as a person stops it; SIGKILL if it does not stop in time."""
        process = self.process
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
        return process.returncode

    def stderr(self) -> str:
        return "\n".join(
            path.read_text(errors="replace") for path in sorted(self.logs.glob("serve-*.err"))
        )

    def alive(self) -> bool:
        """Whether the lobby answers."""
        try:
            status, _ = http(self.base, "GET", "/api/tables", timeout=5)
        except OSError:
            return False
        return status == 200


@contextlib.contextmanager
def running_server(
    folder: Path, *extra: str, program: Sequence[str] = RACING_DEMON
) -> Iterator[Server]:
    server = Server(folder / "data", folder / "server-output", extra=extra, program=program)
    server.start(0)
    try:
        yield server
    finally:
        server.stop()


def download(server: Server, path: str, dest: Path) -> Path:
    status, data = http(server.base, "GET", path)
    assert status == 200, f"GET {path}: {status} {data[:300]!r}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return dest


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "racing_demon", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT,
        check=False,
        env={**os.environ, "NO_COLOR": "1"},
    )


def assert_verify_and_audit(
    server: Server,
    game: str,
    folder: Path,
    *,
    seats: Sequence[int],
    receipts: Sequence[Path] = (),
    copies: Sequence[Path] = (),
) -> Path:
    """Download the game's log, the table key and each seat's receipts as the server kept
    them; ``racing-demon verify`` and ``audit --receipts ... --against ...`` exit 0 on them
    (with the clients' own ``receipts`` and ``copies`` too). Returns the log's path."""
    pub = download(server, "/table.pub", folder / "table.pub")
    log = download(server, f"/games/{game}.jsonl", folder / f"{game}.jsonl")
    kept = [
        download(
            server, f"/games/{game}/seat{seat}.receipts.jsonl", folder / f"server.seat{seat}.jsonl"
        )
        for seat in seats
    ]
    verified = cli("verify", "--table-key", pub, log)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    audit: list[str | Path] = ["audit", log, "--table-key", pub]
    for path in [*kept, *receipts]:
        # A seat with no receipt has an empty file (the server's) or none (a client's,
        # made at its first receipt): there is nothing of it to audit.
        if path.is_file() and path.stat().st_size:
            audit += ["--receipts", path]
    for copy in copies:
        audit += ["--against", copy]
    audited = cli(*audit)
    assert audited.returncode == 0, audited.stdout + audited.stderr
    return log


def tables(server: Server) -> list[dict[str, Any]]:
    answer = api(server.base, "GET", "/api/tables")
    listed = answer["tables"]
    assert isinstance(listed, list)
    return listed


def assert_kept_receipts_logged(
    log: Path, table_key: bytes, kept: Sequence[Sequence[bytes]]
) -> None:
    """Every receipt line in ``kept`` (a client's, as it held them at some moment) is
    valid, and each that says its submission was logged names the record the log holds at
    its ``seq``: nothing a client was told went missing from the log."""
    lines = log.read_bytes().splitlines()
    for lines_kept in kept:
        for number, line in enumerate(lines_kept, 1):
            checked = check_receipt_line(number, line, table_key)
            receipt = checked.receipt
            assert receipt is not None, checked
            if receipt.logged:
                assert record_reference(lines[receipt.seq], receipt.v) == receipt.record, receipt
