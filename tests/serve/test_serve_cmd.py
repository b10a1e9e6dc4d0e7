"""``racing-demon serve`` and its use case (issue 31: "`racing-demon serve [--host
127.0.0.1] [--port 8080] [--data DIR] [--signing-key KEY]` starts a server with an
embedded default that needs nothing else ... One command starts it; Ctrl-C stops it
cleanly"; "Server dependencies go in an extra (`pip install 'racing-demon[serve]'`)";
"a non-loopback `--host` warns that it needs TLS in front").

These run the use case in this process, its tables hosted by a ``RecordingHost`` where a
test only needs the wiring (tests/serve/recording.py); the whole server in its own process
is tested in tests/serve/test_serve_*.py."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.log.keys import generate_private_key, raw_public_bytes, save_key_pair
from racing_demon.outcomes import ExitCode
from racing_demon.profiles import builtin_document, rules_from_document
from racing_demon.serve.context import ServerContext
from racing_demon.serve.data import DataFolder
from racing_demon.serve.index import Index, SeatRow, TableRow
from racing_demon.serve_run import ServeRun, Stopped, is_loopback, run_serve, url_of
from racing_demon.table import PlayerInfo, Table

from .recording import recording_host


class Recorded:
    """A ServeReporter that keeps what it is told; on ``listening`` it runs ``visit`` in
    a thread (the server's loop is serving), then stops the server as Ctrl-C would."""

    def __init__(self, visit: Any = None) -> None:
        self.lines: list[tuple[str, str]] = []
        self.answers: list[Any] = []
        self._visit = visit

    def listening(self, url: str) -> None:
        self.lines.append(("out", f"listening on {url}"))

        def visit_then_stop() -> None:
            try:
                if self._visit is not None:
                    self.answers.append(self._visit(url))
            finally:
                os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=visit_then_stop, daemon=True).start()

    def note(self, message: str) -> None:
        self.lines.append(("err", message))

    def stopped(self, stopped: Stopped) -> None:
        self.lines.append(("stopped", json.dumps(stopped.__dict__)))

    def failed(self, message: str) -> None:
        self.lines.append(("failed", message))


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)


def test_help_shows_the_options_and_examples() -> None:
    result = CliRunner().invoke(main, ["serve", "--help"])
    assert result.exit_code == 0
    for words in ("--host", "--port", "--data DIR", "--signing-key KEY", "racing-demon serve"):
        assert words in result.output


def test_without_the_serve_extra_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """The web stack is an extra: its absence is one line naming the install, exit 2."""
    for name in list(sys.modules):
        if name.startswith(("racing_demon.serve", "racing_demon.report.serve")):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    result = CliRunner().invoke(main, ["serve", "--port", "0", "--data", "unused"])
    assert result.exit_code == ExitCode.UNUSABLE
    assert "pip install 'racing-demon[serve]'" in result.output
    assert "Traceback" not in result.output
    assert not Path("unused").exists()


def test_it_listens_serves_the_lobby_and_stops_cleanly(tmp_path: Path) -> None:
    """Port 0: the first line of standard output names the port the system chose."""

    def visit(url: str) -> Any:
        # What the server process creates meanwhile (a log by Table) is 0640 at most.
        made = tmp_path / "data" / "logs" / "made-by-the-server"
        made.write_bytes(b"")
        return get_json(url + "/api/tables"), stat.S_IMODE(made.stat().st_mode)

    reporter = Recorded(visit)
    umask = os.umask(0o022)
    try:
        code = run_serve(ServeRun(port=0, data=tmp_path / "data"), reporter)
        assert os.umask(0o022) == 0o022  # the caller's umask is given back
    finally:
        os.umask(umask)
    assert code == ExitCode.OK
    kind, first = reporter.lines[0]
    assert kind == "out" and first.startswith("listening on http://127.0.0.1:")
    assert not first.endswith(":0")
    assert reporter.answers == [({"tables": []}, 0o640)]
    assert reporter.lines[-1][0] == "stopped"
    assert not any(kind == "err" and "warning" in text for kind, text in reporter.lines)
    folder = DataFolder(tmp_path / "data")
    assert folder.key_path.is_file() and folder.index_path.is_file()


def test_another_table_key_for_a_folder_is_refused(tmp_path: Path) -> None:
    """A live table resumes only under the key that signed its log."""
    folder = DataFolder.open(tmp_path / "data")
    first = folder.table_key()
    index = Index.open(folder.index_path)
    index.set_meta("table_key", raw_public_bytes(first).hex())
    index.close()
    other = save_key_pair(generate_private_key(), tmp_path, "other").private
    reporter = Recorded()
    code = run_serve(ServeRun(port=0, data=folder.root, signing_key=other), reporter)
    assert code == ExitCode.UNUSABLE
    ((kind, message),) = reporter.lines
    assert kind == "failed"
    assert raw_public_bytes(first).hex() in message and "--signing-key" in message


def test_a_port_in_use_is_refused(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        reporter = Recorded()
        code = run_serve(ServeRun(port=port, data=tmp_path / "data"), reporter)
    assert code == ExitCode.UNUSABLE
    ((kind, message),) = reporter.lines
    assert kind == "failed" and f"cannot listen on http://127.0.0.1:{port}" in message


def test_a_data_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "data").write_text("")
    reporter = Recorded()
    assert run_serve(ServeRun(port=0, data=tmp_path / "data"), reporter) == ExitCode.UNUSABLE
    assert reporter.lines == [("failed", f"{tmp_path / 'data'} exists and is not a folder")]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.org", False),
    ],
)
def test_only_loopback_addresses_go_without_a_warning(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_urls_bracket_ipv6_hosts() -> None:
    assert url_of("127.0.0.1", 8080) == "http://127.0.0.1:8080"
    assert url_of("::1", 80) == "http://[::1]:80"


def test_open_tables_are_hosted_before_anyone_can_connect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: "on restart every unfinished table resumes ... clients reconnect": a
    client that reconnects the moment the server listens finds its table."""
    recording_host(monkeypatch)
    folder = DataFolder.open(tmp_path / "data")
    index = Index.open(folder.index_path)
    rules = json.dumps(builtin_document("table"))
    index.add_table(
        TableRow("ab" * 16, "live", "table", rules, "playing", "00" * 32, 1.0),
        [
            SeatRow("ab" * 16, seat, "person", None, "p", f"{seat:064x}", None, None)
            for seat in (0, 1)
        ],
    )
    index.close()
    reporter = Recorded(lambda url: get_json(url + "/api/tables"))
    hosted = ServerContext.open_tables

    def open_tables(context: ServerContext) -> int:
        count = hosted(context)
        reporter.lines.append(("hosted", str(sorted(context.tables))))
        return count

    monkeypatch.setattr(ServerContext, "open_tables", open_tables)
    assert run_serve(ServeRun(port=0, data=folder.root), reporter) == ExitCode.OK
    kinds = [kind for kind, _ in reporter.lines]
    assert kinds.index("hosted") < kinds.index("out")
    assert ("hosted", str(["ab" * 16])) in reporter.lines
    assert ("err", "resumed 1 live table") in reporter.lines
    assert [table["game"] for table in reporter.answers[0]["tables"]] == ["ab" * 16]


def test_a_torn_log_line_the_journal_never_held_is_cut_so_the_table_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31: "Killed at any moment ... on restart every unfinished table resumes".
    A power cut can leave a live table's log with a torn last line that the journal never
    synced (so nobody was sent it): the start cuts it as `racing-demon recover` would,
    since Table.resume refuses a torn log and the table would not resume."""
    game = "ab" * 16
    folder = DataFolder.open(tmp_path / "data")
    log = folder.log_path(game)
    players = [PlayerInfo("a", "red", None), PlayerInfo("b", "blue", None)]
    rules = rules_from_document(builtin_document("table"))
    entropy = [b"x" * 32, b"y" * 32]
    Table.create(log, rules, players, folder.table_key(), bytes(32), entropy, game_id=game).close()
    index = Index.open(folder.index_path)
    seats = [
        SeatRow(game, seat, "person", None, "p", f"{seat:064x}", None, None) for seat in (0, 1)
    ]
    document = json.dumps(builtin_document("table"))
    index.add_table(TableRow(game, "t", "table", document, "playing", "00" * 32, 1.0), seats)
    index.close()
    recording_host(monkeypatch)
    whole = log.read_bytes()
    log.write_bytes(whole + whole.splitlines(keepends=True)[1][:40])
    reporter = Recorded()
    assert run_serve(ServeRun(port=0, data=folder.root), reporter) == ExitCode.OK
    assert log.read_bytes() == whole
    assert ("err", f"{log.name}: REMOVED_TORN_LINE (40 bytes torn)") in reporter.lines


class Unstopped(Recorded):
    """A reporter that creates a table of two bots once the server listens, and never
    stops the server itself."""

    def listening(self, url: str) -> None:
        self.lines.append(("out", f"listening on {url}"))
        body = {"name": "t", "profile": "table", "seats": [{"kind": "bot", "bot": "hard"}] * 2}
        request = urllib.request.Request(
            url + "/api/tables",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        threading.Thread(target=urllib.request.urlopen, args=(request,), daemon=True).start()


def test_a_journal_that_fails_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/serving.md §2: "If a write or sync of the journal fails ... The server stops;
    the next start recovers": it takes nothing it could no longer make durable. The
    journal's fdatasync fails once a table plays; the server stops by itself, exit 2,
    naming the journal's failure."""

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken)
    reporter = Unstopped()
    interrupted = threading.Event()

    def interrupt() -> None:  # only if the server does not stop by itself
        interrupted.set()
        os.kill(os.getpid(), signal.SIGINT)

    watchdog = threading.Timer(20, interrupt)
    watchdog.start()
    try:
        code = run_serve(ServeRun(port=0, data=tmp_path / "data"), reporter)
    finally:
        watchdog.cancel()
    assert not interrupted.is_set() and code == ExitCode.UNUSABLE
    kind, message = reporter.lines[-1]
    assert kind == "failed" and "FAILED" in message and "Input/output error" in message


def test_a_loopback_server_refuses_requests_that_name_another_host(tmp_path: Path) -> None:
    """Issue 31: "Binds to loopback by default": only this machine reaches it. A page of
    another site whose name was rebound to 127.0.0.1 (DNS rebinding) is its own origin to
    the browser, so its requests name that site as their Host: refused, 403 BAD_ORIGIN;
    the loopback names are served."""

    def visit(url: str) -> Any:
        port = url.rsplit(":", 1)[1]
        answers = []
        for host in (f"rebound.example:{port}", f"localhost:{port}", f"127.0.0.1:{port}"):
            request = urllib.request.Request(url + "/api/tables", headers={"Host": host})
            try:
                with urllib.request.urlopen(request, timeout=10) as response:
                    answers.append((response.status, json.load(response)))
            except urllib.error.HTTPError as refused:
                answers.append((refused.code, json.load(refused)))
        return answers

    reporter = Recorded(visit)
    assert run_serve(ServeRun(port=0, data=tmp_path / "data"), reporter) == ExitCode.OK
    ((rebound, localhost, address),) = reporter.answers
    assert rebound[0] == 403 and rebound[1]["error"]["code"] == "BAD_ORIGIN"
    assert localhost == address == (200, {"tables": []})
