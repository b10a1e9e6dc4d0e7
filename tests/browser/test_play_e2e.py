"""Two people in two real browsers and a bot at one table, played through the pages
(issue 32, "Tests"): "two browser sessions and one bot at one table play a hand through
clicks and keys; a race between the two browsers on one foundation; a reload mid-hand; the
server killed and restarted mid-hand. At the end each browser's copy of the log equals the
server's byte for byte, its exported receipts audit clean, `racing-demon verify` of the
downloaded log with the table's key exits 0, and a log the server tampers with mid-game
makes the page stop with a warning." And a planned restart (SIGTERM, issue 35, point 3):
each page is told when the server stops, and plays on after it without a reload.

Each browser is a Chromium of its own (its own profile, so its own key in IndexedDB). What
the page sent and received on its WebSocket is read from Chromium's performance log, so
each step is checked twice: on the wire (the submit the click made, the receipt that
answered it) and on the page (the ids of docs/client-design §5). Downloads are saved by
Chromium into a folder per browser (CDP ``Browser.setDownloadBehavior``) from a click on
the page's own links, and read back as bytes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from serve.player import create_table, http
from serve.server import (
    Server,
    assert_verify_and_audit,
    needs_server,
    one_hand_rules,
    running_server,
)

from .play_harness import Browser, CardMove, TamperProxy, browsers, wait_for

pytestmark = needs_server

TABLES = 3  # a hand may end by itself before the two seats could race: then another table
PATIENCE = 20  # rounds of holding foundation cards back before a round that plays them
HOLD_ROUNDS = 250  # rounds of play to find a race, per table
RACES = 10  # scheduled races (a bot may take the foundation first) before giving up
MOVE_S = 5.0  # for a click or key to show as a submit on the wire
KEYS_NEEDED = 3  # moves each way (click, keys) that must land during the hand
DRAIN_S = 3  # serve --drain, seconds: how long a planned stop plays on
SIGNED = ("entropy", "cosign", "submit", "accept")  # what a client signs


@pytest.fixture
def pair(chromium: tuple[str, str], tmp_path: Path) -> Iterator[list[Browser]]:
    with browsers(chromium, tmp_path / "browsers", "ada", "bo") as opened:
        yield opened


# -- play through the page --------------------------------------------------------------------


def playing(snap: dict[str, Any]) -> bool:
    return snap["connection"] == "open" and bool(snap["moves"])


def submit_and_receipt(
    browser: Browser, act: Callable[[], object]
) -> tuple[str, dict[str, Any]] | None:
    """Do ``act()`` (a click, keys) and return the move it submitted and the body of its
    receipt; None when the page submitted nothing (the moves had changed under it)."""
    before = len(browser.sent("submit"))

    def submitted() -> dict[str, Any] | None:
        frames = browser.sent("submit")
        return frames[before] if len(frames) > before else None

    act()
    try:
        frame = wait_for(submitted, f"{browser.name}: a submit", MOVE_S)
    except TimeoutError:
        return None

    answered = partial(browser.receipt_by_ref, frame["ref"])
    return frame["move"], wait_for(answered, f"{browser.name}: the receipt of {frame['move']}")


def chosen(moves: list[str], *, hold: bool, keys: bool) -> tuple[CardMove | None, bool]:
    """The card move to play, or None and whether to turn the stock. A card for a numbered
    foundation is held on the demon or a work pile (where it stays playable: two seats
    holding such cards can race for one foundation) unless ``hold`` is false; one on the
    waste is played, since the next turn would bury it. Aces first (new foundations to
    race on), then the waste's foundation card, then a card off the demon or the waste
    onto a work pile (digging; a card from work pile to work pile could go back and forth
    for ever). With ``keys``, only a move whose source one key names (one card)."""
    cards = [card for card in map(CardMove.parse, moves) if card is not None]
    if keys:
        cards = [c for c in cards if not c.source.startswith("w") or len(c.faces) == 1]
    aces = [c for c in cards if c.target == "f+"]
    from_waste = [c for c in cards if c.source == "waste" and c.to_numbered_foundation]
    digging = [c for c in cards if c.source in ("demon", "waste") and c.target.startswith("w")]
    released = [] if hold else [c for c in cards if c.to_numbered_foundation]
    card = next(iter(aces + from_waste + digging + released), None)
    turn = any(" turn " in m or m.endswith(" recycle") for m in moves)
    return card, card is None and turn


@dataclass
class Play:
    """What the two browsers did at their table."""

    game: str
    seats: dict[str, int]
    landed: dict[str, int] = field(default_factory=lambda: {"click": 0, "keys": 0})

    def one_round(self, ada: Browser, bo: Browser, rounds: int) -> None:
        """Each browser plays one move (Ada by clicks, Bo by keys) or turns its stock."""
        hold = rounds % PATIENCE != 0
        for browser, how in ((ada, "click"), (bo, "keys")):
            snap = browser.snapshot()
            card, turn = chosen(snap["moves"], hold=hold, keys=how == "keys")
            seat = self.seats[browser.name]
            act: Callable[[], None]
            if card is not None:
                how_to = browser.play_by_click if how == "click" else browser.play_by_keys
                act = partial(how_to, card)
            elif turn and how == "click":
                act = partial(browser.click_pile, f"s{seat}.stock")
            elif turn:
                act = partial(browser.press, "t")
            else:
                continue
            done = submit_and_receipt(browser, act)
            if done is not None and done[1]["outcome"] == "move":
                self.landed[how] += 1


def race_targets(ada: Browser, bo: Browser) -> tuple[str, str] | None:
    """A move of each browser's list onto the same numbered foundation, if any."""
    lists = []
    for browser in (ada, bo):
        cards = [c for c in map(CardMove.parse, browser.snapshot()["moves"]) if c]
        lists.append({c.target: c.text for c in cards if c.to_numbered_foundation})
    common = sorted(set(lists[0]) & set(lists[1]))
    return (lists[0][common[0]], lists[1][common[0]]) if common else None


def hand_ended(browser: Browser, game: str) -> bool:
    """Whether the page got the ``hand_end`` record of ``game`` (the browser's log holds
    the frames of every table it sat at)."""
    return any(
        '"kind":"hand_end"' in m["line"] and f'"game":"{game}"' in m["line"]
        for m in browser.received("record")
    )


@dataclass(frozen=True)
class Race:
    winner: Browser
    loser: Browser
    won_by: int  # the seq of the winner's record
    target: str


def race(ada: Browser, bo: Browser, play: Play) -> Race | None:
    """Hold foundation cards back until both lists hold a move onto one foundation, then
    click both at one wall-clock instant; again until one lands and one bounces with
    FOUNDATION_TAKEN. None if the hand ended first, or no race came in ``HOLD_ROUNDS``
    rounds or landed in ``RACES`` tries (the cards a race needs may be out of reach)."""
    races = 0
    for rounds in range(1, HOLD_ROUNDS + 1):
        if hand_ended(ada, play.game):
            return None
        pair = race_targets(ada, bo)
        if pair is None:
            play.one_round(ada, bo, rounds)
            continue
        races += 1
        if races > RACES:
            return None
        before = {b.name: len(b.sent("submit")) for b in (ada, bo)}
        at = int(time.time() * 1000) + 600  # both pages' timers fire at this instant
        for browser, move in zip((ada, bo), pair, strict=True):
            browser.schedule_move(move, at)
        fired = [wait_for(b.fired, f"{b.name}: the scheduled click", MOVE_S) for b in (ada, bo)]
        if fired != ["clicked", "clicked"]:
            continue  # a move left a list before its instant (a bot played there)
        bodies = {}
        for browser, move in zip((ada, bo), pair, strict=True):
            # The same move may have bounced before (the card stays): this race's submit first.
            submitted = partial(browser.submits_past, before[browser.name])
            wait_for(submitted, f"{browser.name}: the race's submit", MOVE_S)
            answered = partial(browser.receipt_for, move)
            bodies[browser.name] = wait_for(answered, f"{browser.name}: the race's receipt")
        outcomes = {name: (b["outcome"], b.get("reason")) for name, b in bodies.items()}
        won = [name for name, o in outcomes.items() if o[0] == "move"]
        lost = [name for name, o in outcomes.items() if o == ("bounce", "FOUNDATION_TAKEN")]
        if len(won) == 1 and len(lost) == 1:
            by_name = {b.name: b for b in (ada, bo)}
            target = CardMove.parse(pair[0])
            assert target is not None
            return Race(by_name[won[0]], by_name[lost[0]], bodies[won[0]]["seq"], target.target)
    return None


def resign_and_accept(ada: Browser, bo: Browser, game: str) -> None:
    """Ada resigns unless the hand is over (the rules let that end the match); both pages
    accept the final record."""
    if not hand_ended(ada, game):
        ada.wait("resign offered", lambda s: any(m.endswith(" resign") for m in s["moves"]))
        ada.click("#rd-resign")
        ada.accept_alert()  # a page may ask "resign?" first
    for browser in (ada, bo):
        browser.wait("the final asked", lambda s: s["finalShown"], timeout=60)
        browser.click("#rd-accept")


def open_table(server: Server, ada: Browser, bo: Browser) -> Play:
    """A one-hand nertz table (resign ends the match) of two people and an easy bot (it
    leaves the foundations to the people long enough for a race), created through the
    lobby's API; each browser joins its seat with the lobby's own button."""
    rules = one_hand_rules()
    seats = [{"kind": "person"}, {"kind": "person"}, {"kind": "bot", "bot": "easy"}]
    game = create_table(server.base, seats, name="two browsers and a bot", rules=rules)
    keys = [
        ada.join_from_lobby(server.base, game, 0, "Ada"),
        bo.join_from_lobby(server.base, game, 1, "Bo"),
    ]
    assert keys[0] != keys[1], "two browser profiles, two keys"
    for browser in (ada, bo):
        browser.wait("dealt and playing", playing, timeout=90)
    return Play(game, {"ada": 0, "bo": 1})


def test_two_browsers_and_a_bot_play_race_reload_survive_a_restart_and_verify(
    pair: list[Browser], tmp_path: Path
) -> None:
    ada, bo = pair
    with running_server(tmp_path / "server", "--drain", str(DRAIN_S)) as server:
        for _ in range(TABLES):
            play = open_table(server, ada, bo)
            raced = race(ada, bo, play)
            if raced is not None:
                break
            resign_and_accept(ada, bo, play.game)  # no race at this table: end it, another one
        else:
            raise AssertionError(f"{TABLES} tables without a race between the two browsers")

        # "a bounce says which record won the race"
        shown = raced.loser.wait("the bounce shown", lambda s: s["receipt"]["outcome"] == "bounce")[
            "receipt"
        ]
        assert shown["reason"] == "FOUNDATION_TAKEN", shown
        assert shown["wonBy"] == str(raced.won_by), shown
        assert str(raced.won_by) in shown["text"], shown
        assert raced.winner.snapshot()["receipt"]["outcome"] == "move"

        # A reload mid-hand: the same seat with the same key, going on from its copy.
        for _ in range(3):
            play.one_round(ada, bo, 1)
        held = int(bo.snapshot()["seq"])
        syncs = len(bo.sent("sync"))
        bo.driver.refresh()
        bo.wait("playing again after the reload", playing, timeout=60)
        after = bo.sent("sync")[syncs:]
        assert after and after[0]["from"] >= held + 1, (held, after)  # not from 0: its copy
        assert f"?seat={play.seats['bo']}&token=" in bo.sockets[-1], bo.sockets[-1]
        landed_before = dict(play.landed)
        for rounds in range(1, 20):
            play.one_round(ada, bo, rounds)
            if play.landed["keys"] > landed_before["keys"]:
                break
        assert play.landed["keys"] > landed_before["keys"], "Bo played on after the reload"

        # The server killed (SIGKILL) and restarted mid-hand on the same port: the pages
        # reconnect by themselves; a move made while it was down is sent or reported.
        assert not hand_ended(ada, play.game)
        server.kill()
        for browser in (ada, bo):
            browser.wait("offline", lambda s: s["connection"] != "open")
        # While it is down, Ada turns her stock (a click): the page keeps the move.
        stock = [m for m in ada.snapshot()["moves"] if m.split(" ")[1] in ("turn", "recycle")]
        assert stock, "a stock or a waste to turn mid-hand"
        offline, sent_before = stock[0], len(ada.sent("submit"))
        ada.click_pile(f"s{play.seats['ada']}.stock")
        port = server.port
        server.restart()
        assert server.port == port, "restarted on the same port"
        for browser in (ada, bo):
            browser.wait("playing after the restart", playing, timeout=60)

        def sent_or_reported() -> bool:
            """Issue 32: "not silently lost: it is sent after reconnecting or the page says
            it was not" (a turn's text recurs each time round the stock: a new submit)."""
            if offline in ada.snapshot()["unsent"]:
                return True
            resent = [m for m in ada.sent("submit")[sent_before:] if m["move"] == offline]
            return bool(resent) and ada.receipt_by_ref(resent[-1]["ref"]) is not None

        wait_for(sent_or_reported, f"the move made offline ({offline}) sent or listed unsent")
        landed_before = dict(play.landed)
        for rounds in range(1, 20):
            play.one_round(ada, bo, rounds)
            if all(play.landed[how] > landed_before[how] for how in play.landed):
                break
        assert all(play.landed[how] > landed_before[how] for how in play.landed), play.landed
        assert all(count >= KEYS_NEEDED for count in play.landed.values()), play.landed

        # A planned restart (SIGTERM, issue 35): each page is told when the server stops,
        # and plays again once it is back, without a reload.
        server.terminate()
        for browser in (ada, bo):
            told = browser.wait("told of the stop", lambda s: s["stopping"] is not None)
            assert 0 < int(told["stopping"]) <= DRAIN_S * 1000, told
        assert server.wait(DRAIN_S + 15) == 0
        server.restart()
        assert server.port == port, "restarted on the same port"
        for browser in (ada, bo):
            browser.wait("playing after the planned restart", playing, timeout=60)

        # The end: Ada resigns (the rules let that end the match); both accept the final.
        assert not hand_ended(ada, play.game)
        resign_and_accept(ada, bo, play.game)
        for browser in (ada, bo):
            ended = browser.wait("ended", lambda s: s["ended"], timeout=60)
            assert ended["ended"] == "verified", ended
            assert not ended["warning"]["shown"], ended["warning"]

        # "Download my receipts" and "download my copy of the log", clicked on each page.
        folder = tmp_path / "downloads"
        copies, receipts = [], []
        for browser in (ada, bo):
            browser.download("a#rd-download-log")
            browser.download("a#rd-download-receipts")
            seat = play.seats[browser.name]
            copies.append(browser.downloads / f"{play.game}.jsonl")
            receipts.append(browser.downloads / f"{play.game}.seat{seat}.receipts.jsonl")
            assert copies[-1].exists() and receipts[-1].exists(), sorted(
                browser.downloads.iterdir()
            )
        log = assert_verify_and_audit(
            server, play.game, folder, seats=(0, 1, 2), receipts=receipts, copies=copies
        )
        served = log.read_bytes()
        for copy in copies:
            assert copy.read_bytes() == served  # byte for byte
        lines = served.splitlines()
        for browser in (ada, bo):
            shown = browser.snapshot()
            assert shown["seq"] == str(len(lines) - 1), shown  # "N records checked"
            assert (shown["latency"] or "").isdigit(), shown  # "how long receipts take"
        winner = json.loads(lines[raced.won_by])["body"]
        assert winner["player"] == play.seats[raced.winner.name]
        assert f">{raced.target} " in winner["move"], winner
        accepts = json.loads(lines[-1])["sigs"]["accepts"]
        assert accepts[0] is not None and accepts[1] is not None  # both browsers accepted


def test_a_tampered_record_stops_the_page_with_a_warning_and_nothing_more_is_signed(
    pair: list[Browser], tmp_path: Path
) -> None:
    """Issue 32: "a log the server tampers with mid-game makes the page stop with a
    warning". A proxy between the page and the server changes one bot record's ``t_ms``
    (still canonical, the chain intact, the table's signature now false)."""
    ada = pair[0]
    with running_server(tmp_path / "server") as server:
        proxy = TamperProxy(server.base)
        base = proxy.start()
        try:
            rules = one_hand_rules()
            seats = [{"kind": "person"}, {"kind": "bot", "bot": "easy"}]
            game = create_table(server.base, seats, name="a tampering server", rules=rules)
            ada.join_from_lobby(base, game, 0, "Ada")  # the proxy's origin: a key of its own
            ada.wait("dealt and playing", playing, timeout=90)
            for _ in range(2):
                submit_and_receipt(ada, lambda: ada.press("t"))
            held = int(ada.snapshot()["seq"])
            proxy.arm(lambda body: body["seq"] > held and body.get("player") == 1)
            tampered = wait_for(lambda: proxy.tampered, "a bot record to tamper with", 120)

            warned = ada.wait("the warning", lambda s: s["warning"]["shown"])
            assert warned["warning"]["code"] == "BAD_TABLE_SIGNATURE", warned["warning"]
            assert warned["connection"] == "stopped", warned
            # The page stops: its socket closed, no new one, nothing signed after the line.
            wait_for(lambda: proxy.closed == proxy.upgrades, "the page's socket closed")
            ada.press("t")
            ada.driver.execute_script(
                "document.querySelectorAll('#rd-moves button').forEach((b) => b.click())"
            )
            time.sleep(2.0)  # room for anything the page would still send (it must not)
            signed = [m for m in proxy.frames_since(tampered.at) if m.get("type") in SIGNED]
            assert signed == [], signed
            assert proxy.upgrades == 1, "the page did not reconnect after the problem"
        finally:
            proxy.stop()


def test_a_page_whose_ended_is_lost_takes_the_end_from_the_archive(
    chromium: tuple[str, str], tmp_path: Path
) -> None:
    """Issue 35, point 2: "Reconnection resumes from the log, whatever the gap"; and
    docs/protocol.md §4: "A finished game has no play connection any more (NO_SUCH_TABLE):
    a client that missed its ended finds the game in GET /api/games and downloads its log
    and receipts from there". A proxy between the page and the server loses every ``ended``
    with its connection: once the table is gone the page's reconnection is refused, and
    the page ends with the archive's verdict, its copy the archived log byte for byte."""
    with (
        browsers(chromium, tmp_path / "browsers", "ada") as (ada,),
        running_server(tmp_path / "server") as server,
    ):
        proxy = TamperProxy(server.base, cut_at=lambda message: message.get("type") == "ended")
        base = proxy.start()
        try:
            seats = [{"kind": "person"}, {"kind": "bot", "bot": "easy"}]
            game = create_table(server.base, seats, name="a lost end", rules=one_hand_rules())
            ada.join_from_lobby(base, game, 0, "Ada")
            ada.wait("dealt and playing", playing, timeout=90)
            ada.wait("resign offered", lambda s: any(m.endswith(" resign") for m in s["moves"]))
            ada.click("#rd-resign")
            ada.accept_alert()  # a page may ask "resign?" first
            ada.wait("the final asked", lambda s: s["finalShown"], timeout=60)
            ada.click("#rd-accept")
            ended = ada.wait("ended from the archive", lambda s: s["ended"], timeout=90)
            assert ended["ended"] == "verified" and not ended["warning"]["shown"], ended
            assert proxy.cut >= 1 and proxy.refused >= 1, (proxy.cut, proxy.refused)
            ada.download("a#rd-download-log")
            copy = (ada.downloads / f"{game}.jsonl").read_bytes()
        finally:
            proxy.stop()
        status, log = http(server.base, "GET", f"/games/{game}.jsonl")
    assert status == 200 and copy == log
    assert json.loads(log.splitlines()[-1])["body"]["kind"] == "final"
