"""The archive: every finished game verified as it ends, listed, and downloadable.

``archive_game`` runs the project's verifier on a finished game's log (the table's key
and the table's rules pinned, in a worker thread) and stores its verdict in the index.
The routes:

- ``GET /api/games`` → ``{"games": [GAME…]}``; ``GET /games`` the same as an HTML table
- ``GET /games/GAME.jsonl`` the log, ``GET /games/GAME/seatN.receipts.jsonl`` the
  receipts the server sent seat N, ``GET /games/GAME/view`` the ``racing-demon view``
  page (made on its first request, then kept in the data folder's ``views/``)
- ``GET /table.pub`` the table's public key (PEM)

Files are served by game id alone (no other name reaches the file system): the log of any
table the index holds, the receipts and the page of a finished game only. Every value
shown in HTML is escaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, Final

from aiohttp import web

from racing_demon.files import Output
from racing_demon.game.rules import Rules
from racing_demon.serve.context import ServerContext
from racing_demon.serve.data import FILE_MODE, is_game_id
from racing_demon.serve.host import TableState
from racing_demon.serve.index import GameRow
from racing_demon.serve.protocol import ServeCode, lobby_error
from racing_demon.verify import Settings, verify_log
from racing_demon.viewer.write import PageWriter, ViewRun, WrittenPage, write_view

FINISHED: Final = "finished"
# The page's own policy (viewer.html's meta element: its script and style are inline), and
# nothing may frame it, change its base or post a form.
VIEW_POLICY: Final = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
LIST_POLICY: Final = "default-src 'none'; style-src 'self'; base-uri 'none'; frame-ancestors 'none'"
_JSONL: Final = "application/x-ndjson"


async def archive_game(context: ServerContext, game: str) -> GameRow:
    """Verify the finished log of ``game`` and list it in the index (state finished)."""
    row = context.open_table(game)
    settings = Settings(
        table_key=context.table_public_key,
        rules=Rules.from_document(json.loads(row.rules)).digest(),
    )
    path = context.folder.log_path(game)
    report = await asyncio.get_running_loop().run_in_executor(None, verify_log, path, settings)
    verified = GameRow(
        game=game,
        table_name=row.name,
        players=tuple(seat.name or "" for seat in context.index.seats(game)),
        profile=report.profile or row.profile,
        totals=report.totals,
        winners=report.winners,
        verdict=str(report.verdict),
        code=None if report.finding is None else str(report.finding.code),
        finished=time.time(),
    )
    context.index.add_game(verified)
    context.index.set_state(game, FINISHED)
    return verified


def add_routes(app: web.Application, context: ServerContext) -> None:
    """Add the archive's routes, serving ``context``, to ``app``."""
    archive = _Archive(context)
    game = "{game:[0-9a-f]{32}}"
    app.router.add_get("/api/games", archive.listing)
    app.router.add_get("/games", archive.page)
    app.router.add_get(f"/games/{game}.jsonl", archive.log)
    app.router.add_get(f"/games/{game}/seat{{seat:[0-7]}}.receipts.jsonl", archive.receipts)
    app.router.add_get(f"/games/{game}/view", archive.view)
    app.router.add_get("/table.pub", archive.public_key)


def game_document(row: GameRow) -> dict[str, Any]:
    """A finished game as ``/api/games`` lists it (docs/protocol.md, "Finished games"):
    its ``result`` (each seat's total, the winning seats) is null unless it verified;
    ``code`` is the verifier's finding, ``log`` and ``view`` its downloads."""
    return {
        "game": row.game,
        "table": row.table_name,
        "players": list(row.players),
        "profile": row.profile,
        "result": {"totals": list(row.totals), "winners": list(row.winners)}
        if row.totals
        else None,
        "verdict": row.verdict,
        "code": row.code,
        "time": _time(row.finished),
        "log": f"/games/{row.game}.jsonl",
        "view": f"/games/{row.game}/view",
    }


class _Archive:
    def __init__(self, context: ServerContext) -> None:
        self.context = context
        self._making: dict[str, asyncio.Future[WrittenPage]] = {}  # pages being made

    async def listing(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"games": [game_document(row) for row in self.context.index.games()]}
        )

    async def page(self, request: web.Request) -> web.Response:
        rows = "\n".join(_html_row(row) for row in self.context.index.games())
        return _html(_LIST_PAGE.format(rows=rows or _NO_GAMES), LIST_POLICY)

    async def log(self, request: web.Request) -> web.StreamResponse:
        # A live game's log too: what its spectators are sent, and a client that lost its
        # copy can fetch the records so far; only those sent, each durable: the lines past
        # them may still be lost to a crash (and be written again otherwise), or torn.
        game = request.match_info["game"]
        path = self.context.folder.log_path(game)
        if self.context.index.table(game) is None or not path.is_file():
            return _missing(request)
        hosted = self.context.tables.get(game)
        if hosted is None or hosted.state is TableState.FINISHED:
            return _file(path, f"{game}.jsonl")
        loop = asyncio.get_running_loop()
        sent = await loop.run_in_executor(None, _prefix, path, hosted.sent.size)
        return web.Response(body=sent, headers=_download_headers(f"{game}.jsonl", _JSONL))

    async def receipts(self, request: web.Request) -> web.StreamResponse:
        game = self._finished(request)
        seat = int(request.match_info["seat"])
        if game is None or seat >= len(game.players):
            return _missing(request)
        path = self.context.folder.receipts_path(game.game, seat)
        if not path.is_file():  # a seat that never had a receipt sent
            return _missing(request)
        return _file(path, f"{game.game}.seat{seat}.receipts.jsonl")

    async def view(self, request: web.Request) -> web.StreamResponse:
        game = self._finished(request)
        if game is None:
            return _missing(request)
        page = self.context.folder.view_path(game.game)
        if not page.is_file():
            # One page made per game however many ask at once: the others wait for it.
            making = self._making.get(game.game)
            if making is None:
                log = self.context.folder.log_path(game.game)
                settings = Settings(table_key=self.context.table_public_key)
                loop = asyncio.get_running_loop()
                making = loop.run_in_executor(None, write_page, log, settings, page)
                self._making[game.game] = making
                making.add_done_callback(lambda _: self._making.pop(game.game, None))
            await asyncio.shield(making)
        response = web.FileResponse(page, headers=_headers(VIEW_POLICY))
        response.content_type = "text/html"
        response.charset = "utf-8"
        return response

    async def public_key(self, request: web.Request) -> web.StreamResponse:
        return _file(self.context.folder.public_key_path, "table.pub", "application/x-pem-file")

    def _finished(self, request: web.Request) -> GameRow | None:
        game = request.match_info["game"]
        return self.context.index.game(game) if is_game_id(game) else None


def write_page(log: Path, settings: Settings, page: Path) -> WrittenPage:
    """Write the ``view`` page of ``log`` to ``page`` (beside it first, then moved into
    place, so a page is whole or absent and two requests may both write it)."""
    written: list[WrittenPage] = []
    failed: list[str] = []

    class _Reporter:
        def wrote(self, page: WrittenPage) -> None:
            written.append(page)

        def failed(self, message: str) -> None:
            failed.append(message)

    run = ViewRun(log=log, settings=settings, output=Output(page))
    write_view(run, _Reporter(), open_output=_staged)
    if not written:
        raise OSError(f"no page for {log.name}: {'; '.join(failed)}")
    return written[0]


@contextlib.contextmanager
def _staged(output: Output, option: str) -> Iterator[PageWriter]:
    assert output.path is not None
    descriptor, staged = tempfile.mkstemp(dir=output.path.parent, suffix=".tmp")
    try:
        os.fchmod(descriptor, FILE_MODE)
        with os.fdopen(descriptor, "wb") as stream:
            yield _Page(stream)
        os.replace(staged, output.path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged)
        raise


class _Page:
    """A page file as ``write_view`` writes it (a ``PageWriter``)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)


def _headers(policy: str) -> dict[str, str]:
    return {"Content-Security-Policy": policy, "X-Content-Type-Options": "nosniff"}


def _html(text: str, policy: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", headers=_headers(policy))


def _download_headers(name: str, kind: str) -> dict[str, str]:
    headers = _headers("default-src 'none'")
    headers["Content-Disposition"] = f'attachment; filename="{name}"'
    headers["Content-Type"] = kind
    return headers


def _file(path: Path, name: str, kind: str = _JSONL) -> web.FileResponse:
    return web.FileResponse(path, headers=_download_headers(name, kind))


def _prefix(path: Path, size: int) -> bytes:
    with path.open("rb") as file:
        return file.read(size)


def _missing(request: web.Request) -> web.Response:
    return web.json_response(
        lobby_error(ServeCode.NO_SUCH_TABLE, f"no such game file: {request.path[:120]}"),
        status=404,
    )


def _time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _result(row: GameRow) -> str:
    if not row.totals:
        return ""
    totals = ", ".join(str(total) for total in row.totals)
    winners = ", ".join(row.players[seat] for seat in row.winners if seat < len(row.players))
    return f"{totals} (won: {winners})" if winners else totals


def _html_row(row: GameRow) -> str:
    e = html.escape
    verdict = row.verdict if row.code is None else f"{row.verdict} ({row.code})"
    cells = (
        f'<a href="/games/{e(row.game)}/view">{e(row.game)}</a>',
        e(row.table_name),
        e(", ".join(row.players)),
        e(row.profile),
        e(_result(row)),
        e(verdict),
        e(_time(row.finished)),
        f'<a href="/games/{e(row.game)}.jsonl" download>log</a>',
    )
    return "<tr>" + "".join(f"<td>{cell}</td>" for cell in cells) + "</tr>"


_NO_GAMES: Final = '<tr><td colspan="8">No game has finished yet.</td></tr>'
_LIST_PAGE: Final = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Finished games · racing-demon</title>
</head>
<body>
<h1>Finished games</h1>
<p>Each game was verified by <code>racing-demon verify</code> against this server's
<a href="/table.pub">table key</a> as it ended. Download a log and check it yourself:
<code>racing-demon verify GAME.jsonl --table-key table.pub</code>.</p>
<table>
<thead><tr><th>game</th><th>table</th><th>players</th><th>profile</th><th>result</th>
<th>verdict</th><th>finished (UTC)</th><th>log</th></tr></thead>
<tbody>
{rows}
</tbody>
</table>
</body>
</html>
"""
