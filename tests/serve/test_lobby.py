"""The lobby over HTTP (issue 31: "Lobby (HTTP + JSON): create a table (profile or a rules
file, seats, a bot and its speed for any seat, a name), list open tables, join a seat
with a display name and the player's Ed25519 public key ... A table starts when every
seat is filled"; "nothing a client sends can crash the server or touch its files")."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from racing_demon.log.keys import generate_private_key, raw_public_bytes
from racing_demon.profiles import builtin_document
from racing_demon.schema import schema_errors

from .lobbying import context_in, served
from .recording import recording_host

PEOPLE = [{"kind": "person"}, {"kind": "person"}]


@pytest.fixture(autouse=True)
def _tables_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    recording_host(monkeypatch)  # the context's wiring, not a table's play


def key_hex() -> str:
    return raw_public_bytes(generate_private_key()).hex()


def run(coroutine: Any) -> Any:
    return asyncio.run(coroutine)


async def call(
    client: Any, method: str, path: str, body: Any = None, **options: Any
) -> tuple[int, Any]:
    if body is not None:
        options["json"] = body
    response = await client.request(method, path, **options)
    body = await response.json()
    # Every answer has a shape of schemas/serve-lobby.schema.json (docs/protocol.md §3).
    assert schema_errors("serve-lobby", body) == [], body
    return response.status, body


def refused(status: int, body: Any, expected_status: int, code: str) -> None:
    assert status == expected_status, body
    assert schema_errors("serve-lobby", body) == [], body
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert body["error"]["message"]


def test_create_list_join_and_start(tmp_path: Path) -> None:
    """A table of two people is hosted as it is made, lists its seats, gives each a
    token once (to the index, then the host), and takes no join once it has started."""
    context = context_in(tmp_path / "data")

    async def scenario() -> None:
        async with served(context) as client:
            status, made = await call(
                client,
                "POST",
                "/api/tables",
                {"name": "Friday", "profile": "table", "seats": PEOPLE},
            )
            assert status == 201
            game = made["game"]
            assert made["table"] == {
                "game": game,
                "name": "Friday",
                "profile": "table",
                "state": "waiting",
                "max_rtt_ms": 250,  # the default: "warns above the table's limit"
                "seats": [
                    {
                        "seat": seat,
                        "kind": "person",
                        "bot": None,
                        "name": None,
                        "taken": False,
                        "rtt_ms": None,  # no pong yet
                    }
                    for seat in (0, 1)
                ],
            }
            status, listing = await call(client, "GET", "/api/tables")
            assert (status, listing) == (200, {"tables": [made["table"]]})

            status, joined = await call(
                client, "POST", f"/api/tables/{game}/seats/1", {"name": "Ann", "key": key_hex()}
            )
            assert status == 200
            token = joined["token"]
            assert joined["ws"] == f"/ws/{game}?seat=1&token={token}"
            assert context.seat_token_ok(game, 1, token)
            assert not context.seat_token_ok(game, 1, "0" * 64)
            assert not context.seat_token_ok(game, 0, token)
            # Stored hashed: the index never holds the token itself.
            stored = context.index.seats(game)[1].token_sha256
            assert stored == hashlib.sha256(token.encode()).hexdigest()
            hosted = context.tables[game]  # hosted from its creation, waiting
            assert hosted.seats[1].name == "Ann"  # type: ignore[attr-defined]

            status, body = await call(
                client, "POST", f"/api/tables/{game}/seats/1", {"name": "Bob", "key": key_hex()}
            )
            refused(status, body, 409, "SEAT_TAKEN")

            status, _ = await call(
                client, "POST", f"/api/tables/{game}/seats/0", {"name": "Bob", "key": key_hex()}
            )
            assert status == 200
            assert [seat.name for seat in hosted.seats] == ["Bob", "Ann"]  # type: ignore[attr-defined]
            context.table_state(game, "starting")  # as the host reports it, every seat filled
            status, shown = await call(client, "GET", f"/api/tables/{game}")
            assert shown["state"] == "starting"
            assert [seat["name"] for seat in shown["seats"]] == ["Bob", "Ann"]
            assert "secret" not in json.dumps(shown) and "token" not in json.dumps(shown)

            status, body = await call(
                client, "POST", f"/api/tables/{game}/seats/0", {"name": "Cy", "key": key_hex()}
            )
            refused(status, body, 409, "TABLE_CLOSED")

    run(scenario())


def test_a_table_of_bots_starts_at_once_with_keys_the_server_keeps(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data")
    seats = [{"kind": "bot", "bot": "easy"}, {"kind": "bot", "bot": "hard"}]

    async def scenario() -> None:
        async with served(context) as client:
            status, made = await call(
                client, "POST", "/api/tables", {"name": "Bots", "profile": "nertz", "seats": seats}
            )
            assert status == 201
            game = made["game"]
            assert [seat["bot"] for seat in made["table"]["seats"]] == ["easy", "hard"]
            assert all(seat["taken"] for seat in made["table"]["seats"])
            hosted = context.tables[game]
            spec = hosted.spec  # type: ignore[attr-defined]
            assert spec.rules.name == "nertz"
            assert len(spec.secret) == 32
            assert [seat.bot.name for seat in spec.seats] == ["easy", "hard"]
            for seat in spec.seats:
                assert seat.kind == "bot"
                assert raw_public_bytes(seat.bot_key) == seat.key

    run(scenario())


def test_a_rules_document_is_checked_as_the_rules_command_checks_one(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data")
    custom = builtin_document("table")
    custom["name"] = "quick"
    custom["match"]["target"] = 20
    reserved = builtin_document("table")
    reserved["match"]["target"] = 20  # changed, but still named table
    broken = builtin_document("table")
    broken["players"]["min"] = 9

    async def scenario() -> None:
        async with served(context) as client:
            status, made = await call(
                client, "POST", "/api/tables", {"name": "Q", "rules": custom, "seats": PEOPLE}
            )
            assert status == 201
            assert made["table"]["profile"] == "quick"
            row = context.index.table(made["game"])
            assert row is not None and json.loads(row.rules)["match"]["target"] == 20
            for rules, words in ((reserved, "RESERVED_RULES_NAME"), (broken, "invalid rules")):
                status, body = await call(
                    client, "POST", "/api/tables", {"name": "Q", "rules": rules, "seats": PEOPLE}
                )
                refused(status, body, 400, "BAD_REQUEST")
                assert words in body["error"]["message"]

    run(scenario())


BAD_TABLES = [
    ([1, 2], "BAD_REQUEST", "is not of type 'object'"),
    ({"name": "x", "seats": PEOPLE}, "BAD_REQUEST", "give either profile"),
    ({"name": "x", "profile": "table", "rules": {}, "seats": PEOPLE}, "BAD_REQUEST", "either"),
    ({"name": "x", "profile": "chess", "seats": PEOPLE}, "BAD_REQUEST", "profile"),
    ({"name": "x", "profile": ["table"], "seats": PEOPLE}, "BAD_REQUEST", "profile"),
    ({"name": "", "profile": "table", "seats": PEOPLE}, "BAD_REQUEST", "name"),
    ({"name": "x" * 65, "profile": "table", "seats": PEOPLE}, "BAD_REQUEST", "name"),
    ({"name": "a\u202eb", "profile": "table", "seats": PEOPLE}, "BAD_REQUEST", "printable"),
    ({"name": "x", "profile": "table", "seats": PEOPLE[:1]}, "BAD_REQUEST", "seats"),
    ({"name": "x", "profile": "table", "seats": [{"kind": "person"}] * 9}, "BAD_REQUEST", "seats"),
    ({"name": "x", "profile": "table", "seats": "two"}, "BAD_REQUEST", "seats"),
    (
        {"name": "x", "profile": "table", "seats": [{"kind": "alien"}] * 2},
        "BAD_REQUEST",
        "$.seats[",
    ),
    (
        {"name": "x", "profile": "table", "seats": [{"kind": "bot", "bot": "godlike"}] * 2},
        "BAD_REQUEST",
        "].bot: ",
    ),
    (
        {"name": "x", "profile": "table", "seats": [{"kind": "bot", "bot": ["easy"]}] * 2},
        "BAD_REQUEST",
        "].bot: ",
    ),
    (
        {"name": "x", "profile": "table", "seats": [{"kind": "person", "key": "x"}] * 2},
        "BAD_REQUEST",
        "$.seats[",
    ),
    ({"name": "x", "profile": "table", "seats": PEOPLE, "admin": True}, "BAD_REQUEST", "admin"),
]


@pytest.mark.parametrize(("body", "code", "words"), BAD_TABLES)
def test_a_malformed_table_is_refused_with_its_code(
    tmp_path: Path, body: Any, code: str, words: str
) -> None:
    context = context_in(tmp_path / "data")

    async def scenario() -> tuple[int, Any]:
        async with served(context) as client:
            return await call(client, "POST", "/api/tables", body)

    status, answer = run(scenario())
    refused(status, answer, 400, code)
    assert words in answer["error"]["message"]
    assert context.index.tables_in(("waiting", "starting")) == ()


def test_bodies_that_are_not_json_too_large_or_repeat_a_member_are_refused(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data")
    good = json.dumps({"name": "x", "profile": "table", "seats": PEOPLE})
    json_type = {"Content-Type": "application/json"}

    async def scenario() -> None:
        async with served(context) as client:
            cases = [
                (good, {"Content-Type": "text/plain"}, 400, "BAD_REQUEST"),
                ("{not json", json_type, 400, "BAD_REQUEST"),
                (b"\xff\xfe", json_type, 400, "BAD_REQUEST"),
                (
                    '{"name": "x", "name": "y", "profile": "table", "seats": []}',
                    json_type,
                    400,
                    "BAD_REQUEST",
                ),
                ("[" * 5000 + "]" * 5000, json_type, 400, "BAD_REQUEST"),
                (" " * (64 * 1024) + good, json_type, 400, "BAD_REQUEST"),
            ]
            for data, headers, status, code in cases:
                response = await client.post("/api/tables", data=data, headers=headers)
                refused(response.status, await response.json(), status, code)

            async def dribble() -> Any:  # no Content-Length: the limit still holds
                for _ in range(80):
                    yield b" " * 1024

            response = await client.post("/api/tables", data=dribble(), headers=json_type)
            refused(response.status, await response.json(), 400, "BAD_REQUEST")
            # The server still serves.
            response = await client.post("/api/tables", data=good, headers=json_type)
            assert response.status == 201

    run(scenario())


def test_joins_that_are_refused_say_why(tmp_path: Path) -> None:
    context = context_in(tmp_path / "data")
    seats = [{"kind": "person"}, {"kind": "bot", "bot": "normal"}, {"kind": "person"}]

    async def scenario() -> None:
        async with served(context) as client:
            _, made = await call(
                client, "POST", "/api/tables", {"name": "J", "profile": "table", "seats": seats}
            )
            game = made["game"]
            mine = key_hex()
            cases = [
                (
                    f"/api/tables/{'0' * 32}/seats/0",
                    {"name": "A", "key": mine},
                    404,
                    "NO_SUCH_TABLE",
                ),
                ("/api/tables/../../etc/seats/0", {"name": "A", "key": mine}, 404, None),
                (f"/api/tables/{game}/seats/3", {"name": "A", "key": mine}, 404, "NO_SUCH_SEAT"),
                (f"/api/tables/{game}/seats/1", {"name": "A", "key": mine}, 404, "NO_SUCH_SEAT"),
                (f"/api/tables/{game}/seats/0", {"name": "A", "key": "zz" * 32}, 400, "BAD_KEY"),
                (f"/api/tables/{game}/seats/0", {"name": "A", "key": "00" * 32}, 400, "BAD_KEY"),
                (f"/api/tables/{game}/seats/0", {"name": "A", "key": 7}, 400, "BAD_KEY"),
                (f"/api/tables/{game}/seats/0", {"name": "A", "key": mine.upper()}, 400, "BAD_KEY"),
                (
                    f"/api/tables/{game}/seats/0",
                    {"name": "A", "key": mine, "x": 1},
                    400,
                    "BAD_REQUEST",
                ),
                (
                    f"/api/tables/{game}/seats/0",
                    {"name": "A" * 65, "key": mine},
                    400,
                    "BAD_REQUEST",
                ),
                (f"/api/tables/{game}/seats/0", {"name": "A"}, 400, "BAD_KEY"),
                (f"/api/tables/{game}/seats/0", {"key": mine}, 400, "BAD_REQUEST"),
                (
                    f"/api/tables/{game}/seats/0",
                    {"name": "\x1b[2J", "key": mine},
                    400,
                    "BAD_REQUEST",
                ),
                (f"/api/tables/{game}/seats/0", "A", 400, "BAD_REQUEST"),
            ]
            for path, body, status, code in cases:
                response = await client.post(path, json=body)
                assert response.status == status, (path, body)
                if code is not None:
                    refused(response.status, await response.json(), status, code)
            status, _ = await call(
                client, "POST", f"/api/tables/{game}/seats/0", {"name": "A", "key": mine}
            )
            assert status == 200
            status, body = await call(
                client, "POST", f"/api/tables/{game}/seats/2", {"name": "B", "key": mine}
            )
            refused(status, body, 400, "BAD_KEY")  # one key, one seat
            assert context.index.table(game).state == "waiting"  # type: ignore[union-attr]
            status, body = await call(client, "GET", f"/api/tables/{'a' * 32}")
            refused(status, body, 404, "NO_SUCH_TABLE")

    run(scenario())


def test_open_tables_are_bounded(tmp_path: Path) -> None:
    from racing_demon.serve.context import ServeSettings

    context = context_in(tmp_path / "data", ServeSettings(max_open_tables=2))
    body = {"name": "x", "profile": "table", "seats": PEOPLE}

    async def scenario() -> None:
        async with served(context) as client:
            for _ in range(2):
                assert (await call(client, "POST", "/api/tables", body))[0] == 201
            status, answer = await call(client, "POST", "/api/tables", body)
            refused(status, answer, 409, "TABLE_CLOSED")

    run(scenario())


def test_stats_count_the_journal_and_the_hosted_tables(tmp_path: Path) -> None:
    """``GET /api/stats`` (docs/protocol.md §3): the journal's records and fdatasync batches
    (issue 31: "records per fsync" is a figure of the benchmark) and the tables hosted."""
    context = context_in(tmp_path / "data")

    async def scenario() -> None:
        async with served(context) as client:
            status, before = await call(client, "GET", "/api/stats")
            assert status == 200
            assert before["tables"] == 0
            await call(
                client, "POST", "/api/tables", {"name": "a", "profile": "table", "seats": PEOPLE}
            )
            _, after = await call(client, "GET", "/api/stats")
            assert after["tables"] == 1
            assert after["journal"] == {
                "records": context.journal.stats.records,
                "batches": context.journal.stats.batches,
                "bytes": context.journal.stats.bytes,
            }

    run(scenario())


def test_a_body_that_arrives_in_pieces_is_read_whole(tmp_path: Path) -> None:
    """A client's body may come in several TCP segments (chunks here, a pause between
    them): the lobby reads it to its end (at most its bound), never only the first piece,
    which would refuse a good request as "not JSON"."""
    context = context_in(tmp_path / "data")
    text = json.dumps({"name": "slow", "profile": "table", "seats": PEOPLE}).encode()

    async def pieces() -> Any:
        for start in range(0, len(text), 16):
            yield text[start : start + 16]
            await asyncio.sleep(0.01)

    async def main() -> None:
        async with served(context) as client:
            headers = {"Content-Type": "application/json"}
            status, body = await call(client, "POST", "/api/tables", data=pieces(), headers=headers)
            assert status == 201, body
            assert body["table"]["name"] == "slow"

    run(main())


def test_during_a_planned_stop_the_lobby_answers_503_after_checking_the_request(
    tmp_path: Path,
) -> None:
    """docs/protocol.md §3: ``SERVER_STOPPING`` (503) once the request itself has passed
    its checks: a missing table, a bad key or a bad body are answered as ever."""
    context = context_in(tmp_path / "data")

    async def scenario() -> None:
        async with served(context) as client:
            body = {"name": "Friday", "profile": "table", "seats": PEOPLE}
            _, made = await call(client, "POST", "/api/tables", body)
            context.drain(30)
            refused(*await call(client, "POST", "/api/tables", body), 503, "SERVER_STOPPING")
            bad = {**body, "profile": "chess"}
            refused(*await call(client, "POST", "/api/tables", bad), 400, "BAD_REQUEST")
            seat = {"name": "Ann", "key": key_hex()}
            game = made["game"]
            missing = f"/api/tables/{'0' * 32}/seats/0"
            refused(*await call(client, "POST", missing, seat), 404, "NO_SUCH_TABLE")
            wrong_key = {"name": "Ann", "key": "00"}
            path = f"/api/tables/{game}/seats/0"
            refused(*await call(client, "POST", path, wrong_key), 400, "BAD_KEY")
            refused(*await call(client, "POST", path, seat), 503, "SERVER_STOPPING")

    run(scenario())
