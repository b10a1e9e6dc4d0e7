"""The serve use case: ``run_serve`` does what ``racing-demon serve`` does, for any caller,
without click.

One call opens (or makes) the data folder and its table key, brings the logs and
receipts files up to the journal (``serve.journal.recover_folder``, before any table
resumes: docs/serving.md), opens the index, starts the journal, listens (aiohttp), and
then resumes every table the index says was live. It serves until SIGINT (Ctrl-C) or
SIGTERM, then stops cleanly: the tables first (nothing half-written), then the
connections, then the journal (what is queued is written and synced), then the index.
A table that was playing stays playing in the index, and resumes on the next start.
SIGTERM, what a service manager sends for a restart or a deploy, is a planned stop: the
server first drains for ``ServeRun.drain_s`` seconds, every connection told when it stops
(``stopping``) and the lobby making no table meanwhile, while the tables play on; SIGINT,
or a second signal, stops at once.
A journal whose write or sync fails stops the server the same way, exit 2: nothing more
could be made durable, so nothing more may be taken.

What it reports goes to a ``ServeReporter``: the address it listens on (the first line
of standard output, with the port the system chose for port 0), warnings, and a summary
when it stops. The exit code is 0 after a clean stop, 2 when the data folder, the key,
the index or the address cannot be used.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from aiohttp import web
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.errors import RacingDemonError
from racing_demon.log.keys import raw_public_bytes
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.recover import RecoveryError, recover_log
from racing_demon.serve import archive, lobby, pages
from racing_demon.serve.app import announce_stop, is_loopback, make_app
from racing_demon.serve.context import LIVE_STATES, ServerContext
from racing_demon.serve.data import DataFolder
from racing_demon.serve.index import Index
from racing_demon.serve.journal import Journal, recover_folder
from racing_demon.serve.notes import take_last_stop
from racing_demon.verify import Settings
from racing_demon.wording import plural

DEFAULT_DATA = Path("racing-demon-data")
SERVER_UMASK = 0o027
_TABLE_KEY_META = "table_key"


@dataclass(frozen=True, kw_only=True)
class ServeRun:
    """Where to listen and what to keep: ``racing-demon serve``'s options."""

    host: str = "127.0.0.1"
    port: int = 8080  # 0: a free port the system chooses (reported)
    data: Path = DEFAULT_DATA
    signing_key: Path | None = None  # the table's private key; None: the folder's table.key
    drain_s: int = 30  # SIGTERM: how long the tables play on, told of the stop


@dataclass(frozen=True, kw_only=True)
class Stopped:
    """What a stopped server leaves: the tables still live (they resume on the next start),
    and the journal's records and the batches (fdatasyncs) that made them durable."""

    live_tables: int
    records: int
    batches: int


class ServeReporter(Protocol):
    """What serve prints: ``racing_demon.report.serve``."""

    def listening(self, url: str) -> None:
        """The server listens at ``url`` (standard output's first line)."""

    def note(self, message: str) -> None:
        """A warning or a fact about the start (standard error)."""

    def stopped(self, stopped: Stopped) -> None:
        """The server stopped cleanly."""

    def failed(self, message: str) -> None:
        """Why the server cannot start (standard error)."""


class _Refused(RacingDemonError):
    """What makes the server refuse to start, said to the operator."""


def run_serve(run: ServeRun, reporter: ServeReporter) -> ExitCode:
    """Serve as ``run`` says until stopped (module docs); the exit code."""
    # What the server creates (logs by Table, receipts, pages, the journal) is for its
    # owner and, to read, its group: 0640 files, 0750 folders at most, whoever creates them.
    umask = os.umask(SERVER_UMASK)
    try:
        asyncio.run(_serve(run, reporter))
    except RacingDemonError as error:  # the folder, its key, its index, the address
        reporter.failed(printable(str(error)))
        return ExitCode.UNUSABLE
    finally:
        os.umask(umask)
    return ExitCode.OK


def url_of(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


async def _serve(run: ServeRun, reporter: ServeReporter) -> None:
    folder = DataFolder.open(run.data)
    table_key = folder.table_key(run.signing_key)
    last_stop = take_last_stop(folder)  # before the recovery changes the journal
    recovery = recover_folder(folder)  # before any table resumes (docs/serving.md)
    repaired = recovery.lines_appended + recovery.torn_tails_cut + recovery.receipts_appended
    if repaired:
        reporter.note(
            f"recovered from the journal: {plural(recovery.lines_appended, 'log line')} "
            f"appended, {plural(recovery.torn_tails_cut, 'torn tail')} replaced, "
            f"{plural(recovery.receipts_appended, 'receipt')} appended"
        )
    index = Index.open(folder.index_path)
    try:
        _check_table_key(index, table_key_hex=raw_public_bytes(table_key).hex())
        _cut_torn_logs(folder, index, table_key, reporter)
        journal = Journal(folder)
        await journal.start()
        try:
            context = ServerContext(
                folder=folder,
                index=index,
                journal=journal,
                table_key=table_key,
                archive=archive.archive_game,
                warn=reporter.note,
                last_stop=last_stop,
            )
            await _listen_until_stopped(run, context, reporter)
            stats = journal.stats
        finally:
            await journal.close()
        reporter.stopped(
            Stopped(
                live_tables=len(index.tables_in(LIVE_STATES)),
                records=stats.records,
                batches=stats.batches,
            )
        )
    finally:
        index.close()


def _cut_torn_logs(
    folder: DataFolder, index: Index, table_key: Ed25519PrivateKey, reporter: ServeReporter
) -> None:
    """A live table's log whose last line is torn after the journal's recovery: that line
    was never acknowledged (the journal syncs every line before anything names it, and
    recovery completed every line it held), so ``racing-demon recover``'s judgement
    removes it and the table resumes (``Table.resume`` refuses a torn log). A log that
    recover refuses stays as it is, and its table does not resume (a warning says why)."""
    settings = Settings(table_key=raw_public_bytes(table_key))
    for table in index.tables_in(LIVE_STATES):
        path = folder.log_path(table.game)
        if not _torn(path):
            continue
        try:
            done = recover_log(path, settings)
        except RecoveryError as error:
            reporter.note(f"warning: {printable(str(error))}")
            continue
        reporter.note(f"{path.name}: {done.action} ({plural(done.torn_bytes, 'byte')} torn)")


def _torn(path: Path) -> bool:
    """Whether the file at ``path`` ends in the middle of a line (only its end is read)."""
    try:
        with path.open("rb") as file:
            if file.seek(0, os.SEEK_END) == 0:
                return False
            file.seek(-1, os.SEEK_END)
            return file.read(1) != b"\n"
    except FileNotFoundError:
        return False


def _check_table_key(index: Index, *, table_key_hex: str) -> None:
    """The index remembers the table key its tables were started with: a live table
    resumes only under the key that signed its log, so another key is refused."""
    known = index.meta(_TABLE_KEY_META)
    if known is None:
        index.set_meta(_TABLE_KEY_META, table_key_hex)
    elif known != table_key_hex:
        raise _Refused(
            f"this data folder's tables are signed with the table key {known}; the key "
            f"given is {table_key_hex}: give that key with --signing-key, or another --data"
        )


async def _listen_until_stopped(
    run: ServeRun, context: ServerContext, reporter: ServeReporter
) -> None:
    engine = pages.installed_engine()
    app = make_app(
        context,
        [
            functools.partial(lobby.add_routes, context=context),
            functools.partial(archive.add_routes, context=context),
            functools.partial(pages.add_routes, engine=engine),
        ],
        loopback_only=is_loopback(run.host),
    )
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    try:
        with _stop_signals() as signals:  # before anyone can connect, so none is missed
            # Every open table is hosted before the first connection: a client that
            # reconnects at once finds its table, never a 404 for one about to resume.
            resumed = context.open_tables()
            asked = False  # a stop asked by a signal, the journal sound: a clean one
            try:
                await _listen(run, runner, reporter)
                reporter.note(pages.engine_words(engine))
                if resumed:
                    reporter.note(f"resumed {plural(resumed, 'live table')}")
                first = await _first_of(context.journal, signals.planned, signals.now)
                asked = first is not None  # None: the journal failed
                if first is signals.planned and not signals.now.is_set():
                    asked = await _drain(run.drain_s, signals, context, app, reporter)
            finally:
                await context.stop(clean=asked)  # also when the address was refused
    finally:
        await runner.cleanup()


async def _drain(
    seconds: int,
    signals: _StopSignals,
    context: ServerContext,
    app: web.Application,
    reporter: ServeReporter,
) -> bool:
    """A planned stop: tell every connection, and play on for ``seconds``, or until
    another signal or a failed journal; whether the journal stayed sound."""
    if seconds <= 0:
        return True
    context.drain(seconds)
    announce_stop(app)
    reporter.note(
        f"SIGTERM: stopping in {seconds} s; the tables play on until then, and resume "
        "on the next start (SIGINT or SIGTERM again: stop now)"
    )
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            return await _first_of(context.journal, signals.now) is not None
    return True


async def _first_of(journal: Journal, *events: asyncio.Event) -> asyncio.Event | None:
    """Until one of ``events`` is set (the first of them that is, then), or the journal
    fails (None: nothing more can be made durable, and the server stops; ``close`` then
    raises the journal's error, exit 2)."""
    # The writer stops before close only when it failed.
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(event.wait()) for event in events]
    waits.append(asyncio.ensure_future(journal.stopped()))
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiting in waits:
            waiting.cancel()
        await asyncio.wait(waits)
    return next((event for event in events if event.is_set()), None)


async def _listen(run: ServeRun, runner: web.AppRunner, reporter: ServeReporter) -> None:
    site = web.TCPSite(runner, run.host, run.port)
    try:
        await site.start()
    except OSError as error:
        raise _Refused(
            f"cannot listen on {url_of(run.host, run.port)}: {error.strerror or error}"
        ) from error
    host, port = runner.addresses[0][:2]
    reporter.listening(url_of(str(host), int(port)))
    if not is_loopback(run.host):
        reporter.note(
            f"warning: listening on {printable(run.host)}, not loopback: put a TLS proxy in "
            "front (players' tokens and moves cross the network in clear)"
        )


class _StopSignals:
    """``planned`` is set by the first SIGTERM; ``now`` by SIGINT (Ctrl-C) or any SIGTERM
    after the first, however soon after it comes."""

    def __init__(self) -> None:
        self.planned = asyncio.Event()
        self.now = asyncio.Event()

    def terminate(self) -> None:
        (self.now if self.planned.is_set() else self.planned).set()


@contextmanager
def _stop_signals() -> Iterator[_StopSignals]:
    """Events set by SIGTERM and SIGINT while inside."""
    loop = asyncio.get_running_loop()
    signals = _StopSignals()
    loop.add_signal_handler(signal.SIGTERM, signals.terminate)
    loop.add_signal_handler(signal.SIGINT, signals.now.set)
    try:
        yield signals
    finally:
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(number)
