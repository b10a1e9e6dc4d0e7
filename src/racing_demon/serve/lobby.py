"""The lobby: HTTP + JSON routes that create tables, list them and give seats
(docs/protocol.md, "The lobby").

- ``POST /api/tables`` ``{"name", "profile" | "rules", "seats", "max_rtt_ms"?}`` → 201
  ``{"game", "table"}``
- ``GET /api/tables`` → ``{"tables": [TABLE…]}`` (waiting and live)
- ``GET /api/tables/GAME`` → TABLE
- ``POST /api/tables/GAME/seats/N`` ``{"name", "key"}`` → ``{"token", "ws"}``
- ``GET /api/stats`` → what the server has done since it started: the journal's records,
  batches (one ``fdatasync`` each) and bytes, and the tables it hosts

A request body is JSON (``Content-Type: application/json``, which a page of another site
cannot send without the browser asking first), at most ``MAX_BODY_BYTES``, of the shape
schemas/serve-lobby.schema.json gives its endpoint. Every refusal is ``{"error": {"code",
"message"}}`` with a ServeCode and the status ``protocol.LOBBY_STATUS`` gives it; the
message names the path that is wrong.
"""

from __future__ import annotations

import json
from typing import Any, Final

from aiohttp import web
from jsonschema.exceptions import best_match

from racing_demon.profiles import (
    BUILT_IN,
    CUSTOM_SUFFIX,
    ProfileError,
    builtin_document,
    builtin_named,
)
from racing_demon.profiles import rules_from_document as checked_rules
from racing_demon.schema import EcmaValidator, load_schema
from racing_demon.serve.context import (
    BOT,
    HEX_KEY,
    OPEN_STATES,
    PERSON,
    NewTable,
    SeatRequest,
    ServerContext,
)
from racing_demon.serve.index import SeatRow, TableRow
from racing_demon.serve.protocol import (
    LOBBY_SCHEMA,
    LOBBY_STATUS,
    ServeCode,
    ServeError,
    lobby_error,
)
from racing_demon.serve.round_trips import DEFAULT_MAX_RTT_MS

MAX_BODY_BYTES: Final = 32 * 1024  # a rules document is about 2 KiB
_QUOTED: Final = 300  # a refusal quotes at most this much of what the client sent


def add_routes(app: web.Application, context: ServerContext) -> None:
    """Add the lobby's routes, serving ``context``, to ``app``."""
    lobby = _Lobby(context)
    app.router.add_post("/api/tables", lobby.create)
    app.router.add_get("/api/tables", lobby.listing)
    app.router.add_get("/api/tables/{game}", lobby.table)
    app.router.add_post(r"/api/tables/{game}/seats/{seat:\d{1,2}}", lobby.join)
    app.router.add_get("/api/stats", lobby.stats)


def refusal(error: ServeError) -> web.Response:
    """The response to a refused request: its code's status, ``{"error": …}``."""
    return web.json_response(
        lobby_error(error.code, error.message), status=LOBBY_STATUS.get(error.code, 400)
    )


class _Lobby:
    def __init__(self, context: ServerContext) -> None:
        self.context = context
        self._create = _shape("create_request")
        self._join = _shape("join_request")

    async def create(self, request: web.Request) -> web.Response:
        try:
            new = _new_table(_checked(self._create, await _body(request)))
            table = self.context.create_table(new)
        except ServeError as error:
            return refusal(error)
        return web.json_response({"game": table.game, "table": self._shown(table)}, status=201)

    async def listing(self, request: web.Request) -> web.Response:
        tables = self.context.index.tables_in(OPEN_STATES)
        return web.json_response({"tables": [self._shown(table) for table in tables]})

    async def table(self, request: web.Request) -> web.Response:
        try:
            table = self.context.open_table(request.match_info["game"])
        except ServeError as error:
            return refusal(error)
        return web.json_response(self._shown(table))

    async def join(self, request: web.Request) -> web.Response:
        game, seat = request.match_info["game"], int(request.match_info["seat"])
        try:
            self.context.open_table(game)  # a missing table before a malformed body
            body = await _body(request)
            if isinstance(body, dict) and not (
                isinstance(body.get("key"), str) and HEX_KEY.fullmatch(body["key"])
            ):
                raise ServeError(
                    "key: give the raw Ed25519 public key as 64 lowercase hex",
                    ServeCode.BAD_KEY,
                )
            body = _checked(self._join, body)
            token = self.context.join(game, seat, _shown_name(body["name"]), body["key"])
        except ServeError as error:
            return refusal(error)
        return web.json_response({"token": token, "ws": f"/ws/{game}?seat={seat}&token={token}"})

    async def stats(self, request: web.Request) -> web.Response:
        journal = self.context.journal.stats
        return web.json_response(
            {
                "journal": {
                    "records": journal.records,
                    "batches": journal.batches,
                    "bytes": journal.bytes,
                },
                "tables": len(self.context.tables),
            }
        )

    def _shown(self, table: TableRow) -> dict[str, Any]:
        """TABLE: what anybody may see of a table (never a key, a token or its secret)."""
        return {
            "game": table.game,
            "name": table.name,
            "profile": table.profile,
            "state": table.state,
            "max_rtt_ms": table.max_rtt_ms,
            "seats": [
                _seat(row, self.context.round_trips.median_ms(table.game, row.seat))
                for row in self.context.index.seats(table.game)
            ],
        }


def _seat(row: SeatRow, rtt_ms: int | None) -> dict[str, Any]:
    return {
        "seat": row.seat,
        "kind": row.kind,
        "bot": row.bot,
        "name": row.name,
        "taken": row.taken,
        "rtt_ms": rtt_ms,
    }


async def _body(request: web.Request) -> Any:
    """The request's JSON body, read no further than ``MAX_BODY_BYTES``."""
    if request.content_type != "application/json":
        raise ServeError(
            f"send the body as application/json, not {request.content_type[:60]!r}",
            ServeCode.BAD_REQUEST,
        )
    data = b""
    # read(n) returns what has come so far, up to n bytes: read on to the end (or past
    # the bound), or a body that came in several pieces would be cut.
    while len(data) <= MAX_BODY_BYTES and (piece := await request.content.read(MAX_BODY_BYTES)):
        data += piece
    if len(data) > MAX_BODY_BYTES:
        raise ServeError(f"the body is over {MAX_BODY_BYTES} bytes", ServeCode.BAD_REQUEST)
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as error:
        problem = str(error)[:_QUOTED]
    except RecursionError:
        problem = "nested too deep"
    raise ServeError(f"the body is not JSON: {problem}", ServeCode.BAD_REQUEST)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a member is named twice")
    return members


def _shape(name: str) -> Any:
    """A validator of one shape of the lobby's schema (a ``$defs`` entry)."""
    whole = load_schema(LOBBY_SCHEMA)
    return EcmaValidator({"$defs": whole["$defs"], "$ref": f"#/$defs/{name}"})


def _checked(shape: Any, body: Any) -> dict[str, Any]:
    """``body`` if it has the lobby schema's ``shape``, else BAD_REQUEST naming the first
    path that breaks it (the deepest, where a choice of shapes failed)."""
    first = best_match(shape.iter_errors(body))
    if first is not None and first.validator == "oneOf" and not first.absolute_path:
        # The one choice at the top of a body: the create request's profile or rules.
        raise ServeError(
            "give either profile (a built-in profile's name) or rules (a rules document), not both",
            ServeCode.BAD_REQUEST,
        )
    if first is not None:
        raise ServeError(f"{first.json_path}: {first.message[:_QUOTED]}", ServeCode.BAD_REQUEST)
    assert isinstance(body, dict)
    return body


def _shown_name(name: str) -> str:
    """A name other people are shown: printable, with no space at either end (the schema
    has bounded its length)."""
    if not name.isprintable() or name != name.strip():
        raise ServeError(
            "name: only printable characters, with no space at either end",
            ServeCode.BAD_REQUEST,
        )
    return name


def _new_table(body: dict[str, Any]) -> NewTable:
    """The table ``body`` (of the create_request shape) asks for, its rules checked as
    ``racing-demon rules`` checks a profile."""
    try:
        if "profile" in body:
            if body["profile"] not in BUILT_IN:
                raise ServeError(
                    f"profile: one of {', '.join(BUILT_IN)}, or give a rules document",
                    ServeCode.BAD_REQUEST,
                )
            rules = checked_rules(builtin_document(body["profile"]))
        else:
            rules = checked_rules(body["rules"])
    except ProfileError as error:
        raise ServeError(f"rules: {str(error)[: 3 * _QUOTED]}", ServeCode.BAD_REQUEST) from None
    if rules.name in BUILT_IN and builtin_named(rules) is None:
        # As `racing-demon rules` warns: a table refuses to log such rules.
        raise ServeError(
            f"rules: named like the built-in profile {rules.name!r} but not it: name them "
            f"{rules.name + CUSTOM_SUFFIX!r} (RESERVED_RULES_NAME)",
            ServeCode.BAD_REQUEST,
        )
    seats = tuple(
        SeatRequest(BOT, seat["bot"]) if seat["kind"] == BOT else SeatRequest(PERSON)
        for seat in body["seats"]
    )
    if not rules.min_players <= len(seats) <= rules.max_players:
        raise ServeError(
            f"seats: profile {rules.name!r} is for {rules.min_players} to "
            f"{rules.max_players} players, not {len(seats)}",
            ServeCode.BAD_REQUEST,
        )
    return NewTable(
        name=_shown_name(body["name"]),
        rules=rules,
        seats=seats,
        max_rtt_ms=body.get("max_rtt_ms", DEFAULT_MAX_RTT_MS),
    )
