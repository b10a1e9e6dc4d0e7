"""The lobby: HTTP + JSON routes that create tables, list them and give seats
(docs/protocol.md, "The lobby").

- ``POST /api/tables`` ``{"name", "profile" | "rules", "seats"}`` → 201 ``{"game", "table"}``
- ``GET /api/tables`` → ``{"tables": [TABLE…]}`` (waiting and live)
- ``GET /api/tables/GAME`` → TABLE
- ``POST /api/tables/GAME/seats/N`` ``{"name", "key"}`` → ``{"token", "ws"}``

A request body is JSON (``Content-Type: application/json``, which a page of another site
cannot send without the browser asking first), at most ``MAX_BODY_BYTES``, an object with
exactly the members named. Every refusal is ``{"error": {"code", "message"}}`` with a
ServeCode and a 4xx status; the message names the member that is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from aiohttp import web

from racing_demon.profiles import BUILT_IN, ProfileError, builtin_document, builtin_named
from racing_demon.profiles import rules_from_document as checked_rules
from racing_demon.serve.context import (
    BOT,
    OPEN_STATES,
    PERSON,
    NewTable,
    SeatRequest,
    ServerContext,
)
from racing_demon.serve.index import SeatRow, TableRow
from racing_demon.serve.protocol import ServeCode, ServeError, lobby_error
from racing_demon.sim.bots import BOTS

MAX_BODY_BYTES: Final = 32 * 1024  # a rules document is about 2 KiB
MIN_SEATS: Final = 2
MAX_SEATS: Final = 8
MAX_TABLE_NAME: Final = 64
MAX_PLAYER_NAME: Final = 64  # the log's limit on a player's name

STATUS: Final[Mapping[ServeCode, int]] = {
    ServeCode.BAD_REQUEST: 400,
    ServeCode.BAD_KEY: 400,
    ServeCode.BAD_JSON: 400,
    ServeCode.NOT_OBJECT: 400,
    ServeCode.BAD_MESSAGE: 400,
    ServeCode.BAD_TOKEN: 403,
    ServeCode.NO_SUCH_TABLE: 404,
    ServeCode.NO_SUCH_SEAT: 404,
    ServeCode.SEAT_TAKEN: 409,
    ServeCode.TABLE_CLOSED: 409,
    ServeCode.TOO_LARGE: 413,
}


def add_routes(app: web.Application, context: ServerContext) -> None:
    """Add the lobby's routes, serving ``context``, to ``app``."""
    lobby = _Lobby(context)
    app.router.add_post("/api/tables", lobby.create)
    app.router.add_get("/api/tables", lobby.listing)
    app.router.add_get("/api/tables/{game}", lobby.table)
    app.router.add_post(r"/api/tables/{game}/seats/{seat:\d{1,2}}", lobby.join)


def refusal(error: ServeError) -> web.Response:
    """The response to a refused request: its code's status, ``{"error": …}``."""
    return web.json_response(
        lobby_error(error.code, error.message), status=STATUS.get(error.code, 400)
    )


class _Lobby:
    def __init__(self, context: ServerContext) -> None:
        self.context = context

    async def create(self, request: web.Request) -> web.Response:
        try:
            body = await _body(request)
            new = _new_table(body)
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
            body = _members(await _body(request), required=("name", "key"))
            name = _name(body["name"], "name", MAX_PLAYER_NAME)
            key = body["key"]
            if not isinstance(key, str):
                raise ServeError("key: give a string of 64 hex characters", ServeCode.BAD_KEY)
            token = self.context.join(game, seat, name, key)
        except ServeError as error:
            return refusal(error)
        return web.json_response({"token": token, "ws": f"/ws/{game}?seat={seat}&token={token}"})

    def _shown(self, table: TableRow) -> dict[str, Any]:
        """TABLE: what anybody may see of a table (never a key, a token or its secret)."""
        return {
            "game": table.game,
            "name": table.name,
            "profile": table.profile,
            "state": table.state,
            "seats": [_seat(row) for row in self.context.index.seats(table.game)],
        }


def _seat(row: SeatRow) -> dict[str, Any]:
    return {
        "seat": row.seat,
        "kind": row.kind,
        "bot": row.bot,
        "name": row.name,
        "taken": row.taken,
    }


async def _body(request: web.Request) -> Any:
    """The request's JSON body, read no further than ``MAX_BODY_BYTES``."""
    if request.content_type != "application/json":
        raise ServeError(
            f"send the body as application/json, not {request.content_type[:60]!r}",
            ServeCode.BAD_REQUEST,
        )
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        raise ServeError(
            f"the body is {request.content_length} bytes; at most {MAX_BODY_BYTES}",
            ServeCode.TOO_LARGE,
        )
    data = await request.content.read(MAX_BODY_BYTES + 1)
    if len(data) > MAX_BODY_BYTES:
        raise ServeError(f"the body is over {MAX_BODY_BYTES} bytes", ServeCode.TOO_LARGE)
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError) as error:
        raise ServeError(f"the body is not JSON: {error}", ServeCode.BAD_JSON) from None
    except RecursionError:
        raise ServeError("the body is not JSON: nested too deep", ServeCode.BAD_JSON) from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    members = dict(pairs)
    if len(members) != len(pairs):
        raise ValueError("a member is named twice")
    return members


def _members(
    body: Any, *, required: tuple[str, ...], optional: tuple[str, ...] = (), at: str = "body"
) -> dict[str, Any]:
    """``body`` if it is an object with every ``required`` member and no member but those
    and ``optional``."""
    if not isinstance(body, dict):
        raise ServeError(f"{at}: give a JSON object", ServeCode.NOT_OBJECT)
    missing = [name for name in required if name not in body]
    if missing:
        raise ServeError(f"{at}: {missing[0]!r} is missing", ServeCode.BAD_REQUEST)
    unknown = sorted(set(body) - {*required, *optional})
    if unknown:
        raise ServeError(f"{at}: unknown member {unknown[0][:40]!r}", ServeCode.BAD_REQUEST)
    return body


def _name(value: object, at: str, longest: int) -> str:
    """A name shown to other people: a string of 1 to ``longest`` printable characters."""
    if not isinstance(value, str) or not 1 <= len(value) <= longest:
        raise ServeError(f"{at}: give 1 to {longest} characters", ServeCode.BAD_REQUEST)
    if not value.isprintable() or value != value.strip():
        raise ServeError(
            f"{at}: only printable characters, with no space at either end",
            ServeCode.BAD_REQUEST,
        )
    return value


def _new_table(body: Any) -> NewTable:
    members = _members(body, required=("name", "seats"), optional=("profile", "rules"))
    name = _name(members["name"], "name", MAX_TABLE_NAME)
    seats = _seats(members["seats"])
    if ("profile" in members) == ("rules" in members):
        raise ServeError("give either profile (a built-in name) or rules", ServeCode.BAD_REQUEST)
    try:
        if "profile" in members:
            profile = members["profile"]
            if profile not in BUILT_IN:
                raise ServeError(
                    f"profile: one of {', '.join(BUILT_IN)}, or give a rules document",
                    ServeCode.BAD_REQUEST,
                )
            rules = checked_rules(builtin_document(profile))
        else:
            rules = checked_rules(members["rules"])
    except ProfileError as error:
        raise ServeError(f"rules: {error}", ServeCode.BAD_REQUEST) from None
    if rules.name in BUILT_IN and builtin_named(rules) is None:
        # As `racing-demon rules` warns: a table refuses to log such rules.
        raise ServeError(
            f"rules: named like the built-in profile {rules.name!r} but not it: name them "
            f"{rules.name + '-custom'!r} (RESERVED_RULES_NAME)",
            ServeCode.BAD_REQUEST,
        )
    if not rules.min_players <= len(seats) <= rules.max_players:
        raise ServeError(
            f"seats: profile {rules.name!r} is for {rules.min_players} to "
            f"{rules.max_players} players, not {len(seats)}",
            ServeCode.BAD_REQUEST,
        )
    return NewTable(name=name, rules=rules, seats=seats)


def _seats(value: object) -> tuple[SeatRequest, ...]:
    if not isinstance(value, list) or not MIN_SEATS <= len(value) <= MAX_SEATS:
        raise ServeError(
            f"seats: give a list of {MIN_SEATS} to {MAX_SEATS} seats", ServeCode.BAD_REQUEST
        )
    seats = []
    for number, seat in enumerate(value):
        at = f"seats[{number}]"
        kind = seat.get("kind") if isinstance(seat, dict) else None
        if kind == PERSON:
            _members(seat, required=("kind",), at=at)
            seats.append(SeatRequest(PERSON))
        elif kind == BOT:
            bot = _members(seat, required=("kind", "bot"), at=at)["bot"]
            if not isinstance(bot, str) or bot not in BOTS:
                raise ServeError(f"{at}.bot: one of {', '.join(BOTS)}", ServeCode.BAD_REQUEST)
            seats.append(SeatRequest(BOT, bot))
        else:
            raise ServeError(
                f'{at}: {{"kind": "person"}} or {{"kind": "bot", "bot": "normal"}}',
                ServeCode.BAD_REQUEST,
            )
    return tuple(seats)
