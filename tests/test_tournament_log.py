"""A duplicate tournament's table logs: the genesis names the tournament and the table,
every table deals the plan's packs, a log verifies alone, and the final record waits for
the organiser's reveal (docs/tournament.md, docs/log-format.md §6-§7).

The tournament here is made as an organiser makes one (``make_plan``) and every table is
played at a real ``Table`` created with ``tournament=plan.tag(t)`` and the organiser's
secret as its dealer secret.
"""

from __future__ import annotations

import copy
import json
import random
from functools import cache
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.deal import MatchSeed, pack_digest
from racing_demon.game.duplicate import DuplicateDeal, Shape
from racing_demon.game.flow import FlowCode, RecordKind
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import read_lines
from racing_demon.log.records import (
    Genesis,
    HandStart,
    Record,
    TournamentTag,
    line_bytes,
    parse_record,
    record_body,
)
from racing_demon.profiles import load_rules, rules_from_document
from racing_demon.replay import ReplayError, find_secret, replay
from racing_demon.schema import schema_errors
from racing_demon.sim.bots import BOTS
from racing_demon.sim.simulate import reveal_held, simulate
from racing_demon.table import (
    PlayerInfo,
    ResumeError,
    RevealError,
    SubmissionCode,
    SubmissionError,
    Table,
    TableError,
    player_signer,
)
from racing_demon.testing.randomplay import play_on, word_chooser
from racing_demon.tournament.plan import Contribution, Plan, make_plan
from racing_demon.verify import Settings, Step, Verdict, VerifyCode, verify_log
from racing_demon.viewer import viewer_data

from tampering import PINNED, PLAYER_KEYS, TABLE_KEY, TABLE_PUB, assert_fails, seal, write

SECRET = bytes(range(100, 132))  # the organiser's
SHAPE = Shape("Spring cup 2026", tables=3, seats=3, hands=2)
CONTRIBUTIONS = (Contribution("club", b"club draw \x01" * 2), Contribution("director", b"d" * 32))

Value = dict[str, object]


@cache
def plan() -> Plan:
    return make_plan(SECRET, SHAPE, load_rules("table"), CONTRIBUTIONS)


def players(seats: int = SHAPE.seats) -> list[PlayerInfo]:
    return [PlayerInfo(f"t-player {seat}", f"back{seat}") for seat in range(seats)]


def entropy(table: int, seats: int = SHAPE.seats) -> list[bytes]:
    return [bytes([table, seat + 1]) * 8 for seat in range(seats)]


def create(path: Path, table: int, **options: object) -> Table:
    return Table.create(
        path,
        plan().rules,
        players(),
        TABLE_KEY,
        SECRET,
        entropy(table),
        tournament=plan().tag(table),
        **options,  # type: ignore[arg-type]
    )


def play_out(table: Table, number: int) -> Table:
    return play_on(table, word_chooser(MatchSeed.from_plain(f"tournament table {number}")))


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """Every table of the plan, played out and then revealed, as the organiser does once
    the last table has finished."""
    folder = tmp_path_factory.mktemp("tournament")
    tables = {}
    for number in range(1, SHAPE.tables + 1):
        tables[number] = play_out(create(folder / f"table-{number}.jsonl", number), number)
        assert tables[number].played_out
    for table in tables.values():
        table.reveal()
    return {number: folder / f"table-{number}.jsonl" for number in tables}


def values(path: Path) -> list[dict[str, dict[str, object]]]:
    with path.open("rb") as stream:
        return [line.value for line in read_lines(stream)]  # type: ignore[misc]


def records(path: Path) -> list[Record]:
    return [parse_record(value["body"]) for value in values(path)]


def hand_starts(path: Path) -> list[HandStart]:
    return [record.payload for record in records(path) if isinstance(record.payload, HandStart)]


# -- the genesis ---------------------------------------------------------------------


def test_the_genesis_names_the_tournament_and_the_table(logs: dict[int, Path]) -> None:
    """docs/tournament.md: the genesis of a tournament table has "an extra member
    `"tournament": {"name", "table", "tables", "hands", "entropy": E, "plan": P}`;
    `commitment` is the organiser's C; the final record reveals the organiser's secret." """
    for number, path in logs.items():
        genesis = values(path)[0]["body"]
        assert genesis["tournament"] == {
            "name": SHAPE.name,
            "table": number,
            "tables": SHAPE.tables,
            "hands": SHAPE.hands,
            "entropy": plan().entropy.hex(),
            "plan": plan().digest,
        }
        assert genesis["commitment"] == plan().commitment
        assert find_secret(path) == SECRET
        payload = parse_record(genesis).payload
        assert isinstance(payload, Genesis)
        assert payload.tournament == plan().tag(number)
        assert record_body(parse_record(genesis)) == genesis  # one writer, one reader


def test_a_single_match_genesis_has_no_tournament_member(tmp_path: Path) -> None:
    """docs/log-format.md §6: the `tournament` member is a tournament table's only."""
    path = tmp_path / "single.jsonl"
    Table.create(path, load_rules("table"), players(), TABLE_KEY, SECRET, entropy(1)).close()
    genesis = values(path)[0]["body"]
    assert "tournament" not in genesis
    payload = parse_record(genesis).payload
    assert isinstance(payload, Genesis) and payload.tournament is None


# -- verification ----------------------------------------------------------------------


def test_a_tournament_log_verifies_alone(logs: dict[int, Path]) -> None:
    """docs/tournament.md: "A verifier derives the packs from the revealed secret and the
    genesis's own tournament member (3-5): a single log verifies alone." """
    for path in logs.values():
        report = verify_log(path, PINNED)  # no plan, no secret given: the log alone
        assert report.verdict is Verdict.VERIFIED, report.finding
        assert report.hands and len(report.hands) == SHAPE.hands


def test_every_table_deals_the_planned_packs_rotated(logs: dict[int, Path]) -> None:
    """docs/tournament.md, step 5: "at table `t`, seat `s` plays pack `k = (s + t - 1) mod S`
    of each hand, its cards owned by (wearing the back of) seat `s`. The `hand_start`
    digest is deal-spec step 8 with seat `s`"; so every pack of a hand is played at every
    table, and each table plays each of them."""
    seed = SHAPE.seed(SECRET, plan().entropy)
    played: dict[tuple[int, int], set[tuple[int, ...]]] = {}
    for number, path in logs.items():
        starts = hand_starts(path)
        assert [start.hand for start in starts] == list(range(1, SHAPE.hands + 1))
        deal = DuplicateDeal(SHAPE, seed, number)
        for start in starts:
            for seat, digest in enumerate(start.packs):
                pack = deal.pack(start.hand, seat)
                assert digest == pack_digest(start.hand, seat, pack)
                index = (seat + number - 1) % SHAPE.seats
                assert index == SHAPE.pack_index(number, seat)
                assert plan().packs(number, start.hand)[seat] == SHAPE.pack_number(
                    start.hand, index
                )
                cards = tuple(card.index for card in pack)
                played.setdefault((start.hand, index), set()).add(cards)
    # One layout per planned pack, whichever table and seat played it.
    assert sorted(played) == [(h, k) for h in range(1, SHAPE.hands + 1) for k in range(3)]
    assert all(len(layouts) == 1 for layouts in played.values())
    assert len({next(iter(layouts)) for layouts in played.values()}) == len(played)


def test_another_tables_packs_are_a_pack_mismatch(tmp_path: Path, logs: dict[int, Path]) -> None:
    """docs/log-format.md §7: `PACK_MISMATCH` "a `hand_start` pack digest is not the pack
    the seed deals (names the hand and seat)": a log whose hand_start digests are another
    table's packs does not verify."""
    other = values(logs[2])
    for hand in (1, 2):
        lines = values(logs[1])
        index = next(
            i
            for i, value in enumerate(lines)
            if value["body"]["kind"] == "hand_start" and value["body"]["hand"] == hand
        )
        theirs = next(
            value["body"]["packs"]
            for value in other
            if value["body"]["kind"] == "hand_start" and value["body"]["hand"] == hand
        )
        lines[index]["body"]["packs"] = theirs
        finding = assert_fails(
            verify_log(write(tmp_path, seal(lines), f"moved-{hand}.jsonl"), PINNED),
            Step.PACKS,
            FlowCode.PACK_MISMATCH,
            index + 1,
        )
        assert finding.seat == 0
        assert finding.message.startswith(f"hand {hand}, seat 0:")


def _genesis_edited(logs: dict[int, Path], edit: object) -> list[bytes]:
    lines = values(logs[1])
    genesis = lines[0]["body"]
    edit(genesis)  # type: ignore[operator]
    return seal(lines)


def _rules_edited(**match: object) -> object:
    def edit(genesis: dict[str, object]) -> None:
        rules = copy.deepcopy(genesis["rules"])
        rules["match"].update(match)  # type: ignore[index]
        genesis["rules"] = rules
        genesis["rules_sha256"] = rules_from_document(rules).digest()  # type: ignore[arg-type]

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda g: g["tournament"].update(table=4), "table 4 is not a table of tournament"),
        (lambda g: g["tournament"].update(tables=1, table=2), "table 2 is not a table"),
        (_rules_edited(max_hands=3), "plays exactly 2 hands"),
        (_rules_edited(max_hands=1), "plays exactly 2 hands"),
        (_rules_edited(target=100), "with no target"),
        # A tie for the lead played on would deal a hand the plan has no packs for.
        (_rules_edited(lead_tie="play_on"), "a tie for the lead shares"),
        (lambda g: g["tournament"].update(name="é" * 200), "a tournament name is 1 to 256 bytes"),
    ],
    ids=[
        "table-beyond-tables",
        "fewer-tables",
        "more-hands",
        "fewer-hands",
        "target",
        "play-on",
        "name",
    ],
)
def test_a_genesis_outside_its_tournament_is_bad_tournament(
    tmp_path: Path, logs: dict[int, Path], edit: object, message: str
) -> None:
    """docs/log-format.md §7: `BAD_TOURNAMENT` "a tournament table's genesis names a table
    outside 1 to `tables`, or rules that do not play exactly `hands` hands (with no target,
    a tie for the lead shared), or a tournament no plan can have"."""
    path = write(tmp_path, _genesis_edited(logs, edit))
    finding = assert_fails(verify_log(path, PINNED), Step.PACKS, VerifyCode.BAD_TOURNAMENT, 1)
    assert message in finding.message
    # What was found reads as the documents write it: "target none", never Python's None.
    assert "None" not in (finding.found or "")


def test_bad_tournament_comes_after_bad_seats(tmp_path: Path, logs: dict[int, Path]) -> None:
    """docs/log-format.md §7: "then `BAD_SEATS` (...), then `BAD_TOURNAMENT`"."""

    def edit(genesis: dict[str, object]) -> None:
        genesis["tournament"]["table"] = 4  # type: ignore[index]
        genesis["entropy"] = genesis["entropy"][:2]  # type: ignore[index]

    path = write(tmp_path, _genesis_edited(logs, edit))
    assert_fails(verify_log(path, PINNED), Step.PACKS, VerifyCode.BAD_SEATS, 1)


def test_a_format_1_genesis_names_no_tournament(tmp_path: Path, logs: dict[int, Path]) -> None:
    """docs/log-format.md §6: the `tournament` member is format v2's (a v1 genesis with
    one is off the schema)."""
    lines = values(logs[1])
    for value in lines:
        value["body"]["v"] = 1
        value["body"].pop("seen", None)
    path = write(tmp_path, seal(lines))
    assert_fails(verify_log(path, PINNED), Step.SCHEMA, VerifyCode.SCHEMA, 1)


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.update(seats=3),
        lambda t: t.pop("plan"),
        lambda t: t.update(table=0),
        lambda t: t.update(hands=0),
        lambda t: t.update(entropy="E" * 64),
        lambda t: t.update(name=""),
    ],
    ids=["unknown-member", "no-plan", "table-0", "no-hands", "entropy-not-hex", "no-name"],
)
def test_a_tournament_member_off_the_schema_is_refused(
    tmp_path: Path, logs: dict[int, Path], edit: object
) -> None:
    """docs/log-format.md §6: the member is `"tournament": {"name", "table", "tables",
    "hands", "entropy", "plan"}`: "the tournament's name (1 to 256 bytes of UTF-8), this
    table's number (from 1) and the number of tables, the hands every table plays, the
    plan's entropy digest `E` and the plan's commitment `P` (both 64 hex)"."""
    path = write(tmp_path, _genesis_edited(logs, lambda g: edit(g["tournament"])))  # type: ignore[operator]
    assert_fails(verify_log(path, PINNED), Step.SCHEMA, VerifyCode.SCHEMA, 1)


@pytest.mark.parametrize(
    "member", [("table", 2), ("plan", "0" * 64), ("entropy", "1" * 64), ("name", "Other cup")]
)
def test_tampering_the_tournament_member_breaks_the_table_signature(
    tmp_path: Path, logs: dict[int, Path], member: tuple[str, object]
) -> None:
    """docs/log-format.md §6: `table` is "the table's signature (§5) with kind = the
    record's kind over the canonical body, on every line": the genesis's tournament member
    is in its body, so a log cannot be moved to another table or tournament."""
    lines = values(logs[1])
    lines[0]["body"]["tournament"][member[0]] = member[1]  # type: ignore[index]
    raw = [line_bytes(value["body"], value["sigs"]) for value in lines]
    assert_fails(
        verify_log(write(tmp_path, raw), PINNED), Step.SIGNATURES, VerifyCode.BAD_TABLE_SIGNATURE, 1
    )


# -- the table -------------------------------------------------------------------------


def test_the_table_refuses_rules_that_are_not_the_tournaments(tmp_path: Path) -> None:
    """table/start.py: "the table never writes a log that its own verifier refuses": a
    tournament's table plays the plan's rules (exactly its hands, no target)."""
    path = tmp_path / "table.jsonl"
    with pytest.raises(TableError, match="BAD_TOURNAMENT"):
        Table.create(
            path,
            load_rules("table"),
            players(),
            TABLE_KEY,
            SECRET,
            entropy(1),
            tournament=plan().tag(1),
        )
    assert not path.exists()
    outside = plan().tag(1)._replace(table=SHAPE.tables + 1)
    with pytest.raises(TableError, match="BAD_TOURNAMENT"):
        create_with(path, outside)
    assert not path.exists()


def create_with(path: Path, tag: TournamentTag) -> Table:
    return Table.create(
        path, plan().rules, players(), TABLE_KEY, SECRET, entropy(1), tournament=tag
    )


def test_the_held_reveal_writes_nothing_until_reveal(tmp_path: Path) -> None:
    """docs/tournament.md: "a tournament `Table` holds its final record once the last hand
    has ended: `table.played_out` becomes True, `table.finished` stays False, and
    `table.reveal()` writes the final record (with acceptances) when the organiser says
    so." """
    path = tmp_path / "table-1.jsonl"
    table = create(path, 1)
    with pytest.raises(RevealError, match="not played out"):
        table.reveal()
    play_out(table, 1)
    assert table.played_out and not table.finished
    held = path.read_bytes()
    assert SECRET.hex().encode() not in held  # nothing reveals the secret yet
    table.advance(table.t_ms + 60_000)
    with pytest.raises(SubmissionError) as refused:
        table.submit(0, "0 call", table.t_ms + 60_000, table.next_n(0))
    assert refused.value.code is SubmissionCode.FINAL_HELD
    assert path.read_bytes() == held
    unrevealed = verify_log(path, PINNED)
    assert unrevealed.verdict is Verdict.UNFINISHED
    assert verify_log(path, Settings(table_key=TABLE_PUB, seed=SECRET)).verdict is (
        Verdict.UNFINISHED  # every record replays with the secret: only the final is owed
    )
    table.reveal(table.t_ms + 120_000)
    assert table.finished and table.played_out
    assert path.read_bytes().startswith(held)
    last = records(path)[-1]
    assert last.kind is RecordKind.FINAL and last.t_ms == 120_000 + held_t_ms(held)
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED
    with pytest.raises(RevealError, match="revealed already"):
        table.reveal()


def held_t_ms(held: bytes) -> int:
    return json.loads(held.splitlines()[-1])["body"]["t_ms"]  # type: ignore[no-any-return]


def test_a_keyed_tournament_table_asks_for_acceptances_at_the_reveal(tmp_path: Path) -> None:
    """docs/log-format.md §6: "*(v2)* `accepts`: on the final record of a keyed game,
    optionally: one entry per seat"; each keyed seat's entropy is its signature over the
    organiser's commitment, checked as today, while the deal is the plan's."""
    keys = PLAYER_KEYS[: SHAPE.seats]
    keyed = [
        PlayerInfo(f"k{seat}", f"b{seat}", raw_public_bytes(key)) for seat, key in enumerate(keys)
    ]
    path = tmp_path / "keyed.jsonl"
    table = Table.create(
        path,
        plan().rules,
        keyed,
        TABLE_KEY,
        SECRET,
        None,
        player_signers=[player_signer(key) for key in keys],
        tournament=plan().tag(2),
    )
    play_on(table, word_chooser(MatchSeed.from_plain("keyed")), player_keys=keys)
    table.reveal()
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.accepted_by == tuple(range(SHAPE.seats))
    seed = SHAPE.seed(SECRET, plan().entropy)
    assert hand_starts(path)[0].packs == tuple(
        pack_digest(1, seat, DuplicateDeal(SHAPE, seed, 2).pack(1, seat))
        for seat in range(SHAPE.seats)
    )


def test_a_tournament_table_resumes_and_still_holds_its_reveal(tmp_path: Path) -> None:
    """table/live.py, ``Table.resume``: "A tournament's table holds its final record as
    ``create``'s does: a log played out but not revealed resumes ``played_out``, ready to
    ``reveal``." """
    path = tmp_path / "table-3.jsonl"
    table = create(path, 3)
    choose = random.Random(3).choice
    play_on(table, choose, max_rounds=40)
    assert not table.played_out
    table.close()  # a crash between records
    resumed = Table.resume(path, TABLE_KEY, SECRET)
    assert resumed.tournament == plan().tag(3) and not resumed.played_out
    play_out(resumed, 3)
    assert resumed.played_out and not resumed.finished
    resumed.close()
    again = Table.resume(path, TABLE_KEY, SECRET)  # played out, the reveal still owed
    assert again.played_out and not again.finished
    before = path.read_bytes()
    again.reveal()
    assert path.read_bytes().startswith(before)
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED
    seed = SHAPE.seed(SECRET, plan().entropy)
    for start in hand_starts(path):
        assert start.packs == tuple(
            pack_digest(start.hand, seat, DuplicateDeal(SHAPE, seed, 3).pack(start.hand, seat))
            for seat in range(SHAPE.seats)
        )
    with pytest.raises(ResumeError, match="the match is over"):
        Table.resume(path, TABLE_KEY, SECRET)


def test_a_tournament_log_replays(logs: dict[int, Path]) -> None:
    """replay.py: "Each record goes through the match flow (...), the same one that the
    table writes with and the verifier judges with": replay deals a tournament log's packs
    as its genesis says, from the revealed secret."""
    path = logs[2]
    secret = find_secret(path)
    assert secret == SECRET
    seed = SHAPE.seed(SECRET, plan().entropy)
    hands = []
    for snapshot in replay(path, secret):
        if snapshot.record is not None and snapshot.record.kind is RecordKind.HAND_START:
            state = snapshot.state
            assert state is not None
            assert snapshot.flow is not None and snapshot.flow.dealer == DuplicateDeal(
                SHAPE, seed, 2
            )
            hands.append(state.hand)
    assert hands == [1, 2]
    wrong = bytes(32)  # a secret that deals other packs stops replay at the first hand
    with pytest.raises(ReplayError, match="PACK_MISMATCH"):
        list(replay(path, wrong))


# -- simulation --------------------------------------------------------------------------


def test_a_simulated_tournament_table_holds_its_reveal(tmp_path: Path) -> None:
    """sim/simulate.py: "With ``tournament`` (...) the table deals the plan's packs and,
    once played out, holds the final record (``Simulation.held``), which ``reveal_held``
    writes once every table has played." """
    path = tmp_path / "sim-1.jsonl"
    bots = [BOTS["easy"], BOTS["normal"], BOTS["hard"]]
    keys = PLAYER_KEYS[: SHAPE.seats]
    result = simulate(
        path,
        plan().rules,
        bots,
        "tournament sim",
        TABLE_KEY,
        player_keys=keys,
        tournament=plan().tag(1),
        dealer_secret=SECRET,
    )
    assert result.held and result.match.over
    assert verify_log(path, PINNED).verdict is Verdict.UNFINISHED
    reveal_held(path, TABLE_KEY, SECRET, player_keys=keys)
    report = verify_log(path, PINNED)
    assert report.verdict is Verdict.VERIFIED, report.finding
    assert report.accepted_by == (0, 1, 2)
    assert report.totals == result.match.totals
    with pytest.raises(ValueError, match="organiser's secret"):
        simulate(
            tmp_path / "no-secret.jsonl",
            plan().rules,
            bots,
            "x",
            TABLE_KEY,
            tournament=plan().tag(1),
        )


def test_a_simulation_given_a_dealer_secret_deals_from_it(tmp_path: Path) -> None:
    """docs/simulation.md: "`dealer_secret` alone (no tournament) replaces the seed's
    dealer secret in any simulation"; the table then writes its final record at once."""
    path = tmp_path / "secret.jsonl"
    bots = [BOTS["easy"], BOTS["hard"]]
    result = simulate(
        path, plan().rules, bots, "given secret", TABLE_KEY, dealer_secret=SECRET, receipts=False
    )
    assert not result.held
    assert find_secret(path) == SECRET
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED


def test_tables_of_another_key_are_not_this_tables(logs: dict[int, Path]) -> None:
    """docs/log-format.md §7: `WRONG_TABLE_KEY` "the genesis `table_key` is not the key id
    of the pinned `--table-key`": a tournament log is its table's, like any log."""
    other = Ed25519PrivateKey.from_private_bytes(bytes([9]) * 32)
    report = verify_log(logs[1], Settings(table_key=raw_public_bytes(other)))
    assert report.finding is not None and report.finding.code is VerifyCode.WRONG_TABLE_KEY


def test_a_table_dealing_from_another_secret_is_not_the_plans(tmp_path: Path) -> None:
    """docs/threat-model.md §4: "A log proves its packs are those its genesis's tournament
    member and the revealed secret deal, not that they are the published plan's: a table
    dealing from another secret, or naming another plan, verifies alone, and `tournament
    score` refuses it against the plan (another commitment, another plan)." """
    ground = bytes(range(1, 33))  # an organiser's second secret, tried after the entropy
    path = tmp_path / "ground.jsonl"
    table = Table.create(
        path, plan().rules, players(), TABLE_KEY, ground, entropy(1), tournament=plan().tag(1)
    )
    play_out(table, 1)
    table.reveal()
    assert verify_log(path, PINNED).verdict is Verdict.VERIFIED
    genesis = values(path)[0]["body"]
    assert genesis["tournament"]["plan"] == plan().digest  # type: ignore[index]
    assert genesis["commitment"] != plan().commitment  # what scoring against the plan sees
    planned = DuplicateDeal(SHAPE, SHAPE.seed(SECRET, plan().entropy), 1)
    assert hand_starts(path)[0].packs != tuple(
        pack_digest(1, seat, planned.pack(1, seat)) for seat in range(SHAPE.seats)
    )


def test_the_viewer_names_the_tournament_and_the_table(logs: dict[int, Path]) -> None:
    """docs/viewer.md: "for a duplicate tournament's table, the page's header names the
    tournament and the table, and the About panel the number of tables and hands and the
    plan's commitment" (the page's data: `game.tournament`); its genesis is told with them."""
    data = viewer_data(logs[3], PINNED)
    assert schema_errors("viewer-data", data) == []
    assert data["game"]["tournament"] == {
        "name": SHAPE.name,
        "table": 3,
        "tables": SHAPE.tables,
        "hands": SHAPE.hands,
        "plan": plan().digest,
    }
    assert f"at table 3 of 3 of the tournament {SHAPE.name}" in data["records"][0]["text"]
