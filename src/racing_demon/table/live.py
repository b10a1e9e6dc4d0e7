"""The ``Table``: one match at one table, from its genesis (``create``) or its log after a
crash (``resume``) to its final record, each submission checked, recorded and answered with
a receipt. What the table does, and for whom, is the package's docstring
(``racing_demon.table``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.game.flow import HandStart, MatchEnd, MatchFlow, RecordKind, Seen
from racing_demon.game.moves import Move
from racing_demon.game.race import Races
from racing_demon.game.rules import Rules
from racing_demon.game.scoring import Match
from racing_demon.game.state import EndReason, State, next_deadline
from racing_demon.log.canonical import canonical_bytes
from racing_demon.log.keys import raw_public_bytes
from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.log.receipts import (
    SubmissionCode,
    logged_receipt,
    refused_receipt,
    seal_receipt,
)
from racing_demon.log.records import (
    LOST_TO_VERSION,
    NOTE_VERSION,
    SEEN_WINDOW,
    Final,
    Genesis,
    Note,
    TournamentTag,
    chain_hash,
    record_body,
    submission_statement,
)
from racing_demon.log.writer import LogWriter
from racing_demon.schema import checked_errors
from racing_demon.table.errors import (
    RevealError,
    SubmissionError,
    TableCode,
    TableError,
    log_exists,
)
from racing_demon.table.lines import LineHook, OnRecord
from racing_demon.table.players import PlayerInfo, PlayerSigner, acceptances
from racing_demon.table.start import genesis_body, new_genesis, rebuild
from racing_demon.table.submissions import Outcome, signature_problem, well_formed


class Table:
    """One match at one table. Create it with ``Table.create``.

    The table writes what the match flow (``racing_demon.game.flow``) makes of each
    submission, then every record the flow makes due, so that it writes exactly the log
    that the verifier, judging with the same flow, accepts.
    """

    def __init__(
        self,
        writer: LogWriter,
        table_key: Ed25519PrivateKey,
        flow: MatchFlow,
        players: Sequence[PlayerInfo],
        game: str,
        secret: bytes,
        player_signers: Sequence[PlayerSigner] | None,
        tournament: TournamentTag | None = None,
        hold_final: bool = False,
    ) -> None:
        self._writer = writer
        self._key = table_key
        self._flow = flow
        self._players = tuple(players)
        self._game = game
        self._secret = secret
        self._signers = None if player_signers is None else tuple(player_signers)
        self._next_n = [0] * len(players)
        self._now = writer.t_ms  # the table's clock: the last record's time, or later
        self._tournament = tournament
        # A tournament's table, or one made with hold_final, holds its final record once
        # due, until reveal() writes it.
        self._hold_final = hold_final or tournament is not None
        self._held: Final | None = None
        self._races = Races()  # the hand in play's: a v4 bounce names the race it lost

    @classmethod
    def create(
        cls,
        path: Path,
        rules: Rules,
        players: Sequence[PlayerInfo],
        table_key: Ed25519PrivateKey,
        dealer_secret: bytes,
        entropy: Sequence[bytes] | None,
        *,
        player_signers: Sequence[PlayerSigner] | None = None,
        game_id: str | None = None,
        durable: bool = True,
        tournament: TournamentTag | None = None,
        on_line: Callable[[bytes], None] | None = None,
        hold_final: bool = False,
        on_record: OnRecord | None = None,
    ) -> Table:
        """Write the genesis and deal the first hand.

        In a keyed game (every player lists a key, and ``player_signers`` holds each
        seat's signer) the table publishes the game id and the dealer's commitment to the
        signers, and each seat's entropy is its signer's answer: its signature over them
        (docs/deal-spec.md), so ``entropy`` must be None; every seat then co-signs the
        genesis. In an unkeyed game ``entropy`` holds one contribution per seat, on the
        table's word.

        With ``tournament`` (a plan's ``Plan.tag(table)``) the match is that table of a
        duplicate tournament: ``dealer_secret`` is the organiser's secret, whose commitment
        the plan holds, ``rules`` the plan's, and every hand deals the plan's packs for the
        table, not packs from the seats' entropy (which the genesis still lists and the
        verifier still checks). The final record is held (``played_out``) until
        ``reveal``.

        ``game_id`` (32 lowercase hex; by default 128 random bits) names this match and no
        other, ever: the table signs one history per game id, so two logs of one id, a
        match restarted under its id included, are a fork that receipts and copies prove
        (docs/log-format.md §10).

        Refuses an existing file (TableError ``LOG_EXISTS``): a log is never overwritten.
        ``durable=False`` flushes every record but skips the fsync, so a crash may lose
        records the table acknowledged: for simulations and benchmarks only, never for a
        table that players rely on, unless ``on_line`` makes every line durable.

        ``on_line`` is called with every line the table writes (without its newline), once
        it is written and flushed, before the call that wrote it returns: a server journals
        it there, and acknowledges nothing before the journal has synced it; ``on_record``
        then, with the position after the line's record (``table.lines``). With
        ``hold_final`` the final record is held once due, as a tournament's is, until
        ``reveal``: the server then sends each seat ``final_body()`` and gathers their
        acceptances over the network before the signers are asked for them.
        """
        if os.path.lexists(path):  # before any seat is asked to sign
            raise log_exists(path)
        genesis, sigs = new_genesis(
            rules, players, table_key, dealer_secret, entropy, player_signers, game_id, tournament
        )
        game = genesis.game
        assert isinstance(genesis.payload, Genesis)
        dealer = genesis.payload.dealer(dealer_secret)  # the verifier's, as step 7 makes it
        try:
            file = path.open("xb")  # exclusive: a file made since the first look is refused too
        except FileExistsError:
            raise log_exists(path) from None
        try:
            hook = LineHook(on_line, on_record)  # the table's position: set once it exists
            writer = LogWriter(file, game, table_key, durable=durable, on_append=hook)
            writer.append(0, genesis.payload, sigs)
            flow = MatchFlow.begin(rules, dealer, len(players))
            table = cls(
                writer,
                table_key,
                flow,
                players,
                game,
                dealer_secret,
                player_signers,
                tournament,
                hold_final,
            )
            hook.position = lambda: table._flow.state
            table._record_due(0)
        except BaseException:
            # The file is this call's own (opened exclusively): a failed create leaves
            # nothing behind, so the same create can be tried again.
            file.close()
            path.unlink(missing_ok=True)
            raise
        return table

    @staticmethod
    def genesis_body(
        rules: Rules,
        players: Sequence[PlayerInfo],
        table_key: Ed25519PrivateKey,
        dealer_secret: bytes,
        entropy: Sequence[bytes],
        game_id: str,
    ) -> bytes:
        """The canonical body bytes of the genesis that ``create`` with these arguments
        (and ``game_id``) writes once each keyed seat's entropy is ``entropy``: what every
        seat co-signs. A server whose players sign over the network sends it to them, and
        gathers their co-signatures, before it creates the table."""
        return genesis_body(rules, players, table_key, dealer_secret, entropy, game_id)

    @classmethod
    def resume(
        cls,
        path: Path,
        table_key: Ed25519PrivateKey,
        dealer_secret: bytes,
        *,
        player_signers: Sequence[PlayerSigner] | None = None,
        limits: Limits = DEFAULT_LIMITS,
        durable: bool = True,
        on_line: Callable[[bytes], None] | None = None,
        hold_final: bool = False,
        on_record: OnRecord | None = None,
    ) -> Table:
        """Continue the unfinished match logged at ``path`` after a crash.

        The log must verify as unfinished under this table's key and dealer secret, every
        record replayed; a torn last line must be removed first (``racing-demon recover``).
        The table then writes what the crash cut short (a due stall shift, the hand's end,
        the next deal or the final record, which ``player_signers`` may accept) and takes
        submissions again. A tournament's table holds its final record as ``create``'s does:
        a log played out but not revealed resumes ``played_out``, ready to ``reveal``.
        ``durable``, ``on_line``, ``on_record`` and ``hold_final`` are ``create``'s (a server
        passes the ones it created the table with). The table goes on in the log's own
        format (``version``): v2, v3 or v4, whatever the newest is, so a server upgraded mid-match
        loses no table. Raises ResumeError, also for a log of format v1.
        """
        rebuilt = rebuild(path, raw_public_bytes(table_key.public_key()), dealer_secret, limits)
        flow, genesis, last = rebuilt.flow, rebuilt.genesis, rebuilt.last
        assert flow is not None and genesis is not None and last is not None
        players = [
            PlayerInfo(
                entry.name, entry.back, None if entry.key is None else bytes.fromhex(entry.key)
            )
            for entry in genesis.players
        ]
        writer = LogWriter(
            path.open("ab"),
            last.game,
            table_key,
            seq=last.seq + 1,
            t_ms=last.t_ms,
            recent_hashes=rebuilt.recent,
            head_body=hashlib.sha256(canonical_bytes(record_body(last))).hexdigest(),
            durable=durable,
            on_append=(hook := LineHook(on_line, on_record)),
            version=last.v,  # a log goes on in its own format, whatever the newest is
        )
        table = cls(
            writer,
            table_key,
            flow,
            players,
            last.game,
            dealer_secret,
            player_signers,
            genesis.tournament,
            hold_final,
        )
        table._next_n, table._races = rebuilt.next_n, rebuilt.races
        hook.position = lambda: table._flow.state
        table._record_due(writer.t_ms)
        return table

    @property
    def game(self) -> str:
        return self._game

    @property
    def version(self) -> int:
        """The log's format version, in which every record and signature of the match is
        made: the newest for a new table, the log's own for a resumed one."""
        return self._writer.version

    @property
    def players(self) -> tuple[PlayerInfo, ...]:
        return self._players

    @property
    def state(self) -> State:
        """The current hand's position (after the match, its last hand)."""
        state = self._flow.state
        assert state is not None  # the first hand is dealt as the table is created
        return state

    @property
    def match(self) -> Match:
        return self._flow.match

    @property
    def tournament(self) -> TournamentTag | None:
        """The tournament and table this match belongs to, if any."""
        return self._tournament

    @property
    def finished(self) -> bool:
        """Whether the final record is written."""
        return self._flow.finished

    @property
    def played_out(self) -> bool:
        """Whether the match is over: every hand ended, so no submission is taken. A single
        match's final record is then written at once (``finished``); a tournament's table,
        or one made with ``hold_final``, holds it until ``reveal``."""
        return self._held is not None or self._flow.finished

    def final_body(self, t_ms: int | None = None) -> bytes:
        """The canonical body bytes of the held final record as ``reveal(t_ms)`` will write
        it (by default at the table's clock): what each keyed seat signs to accept it, so a
        server can ask the seats before it reveals. Raises RevealError when no final record
        is held."""
        held = self._held
        if held is None:
            why = "it is written already" if self.finished else "the match is not played out"
            raise RevealError(f"no final record is held: {why}")
        return self._writer.next_body(self._reveal_time(t_ms), held)

    def reveal(self, t_ms: int | None = None) -> None:
        """Write the held final record (at ``t_ms``, by default the table's clock), which
        reveals the secret: at a tournament's table only once every table of the tournament
        has played out. Each keyed seat is asked to accept it, as at any table's end.
        Raises RevealError when no final record is held.
        """
        held = self._held
        if held is None:
            why = "it is revealed already" if self.finished else "the match is not played out"
            raise RevealError(f"nothing to reveal: {why}")
        t_ms = self._reveal_time(t_ms)
        self._now = t_ms
        self._held = None
        self._write_final(held, t_ms)

    def _reveal_time(self, t_ms: int | None) -> int:
        t_ms = self._now if t_ms is None else t_ms
        if t_ms < self._now:
            raise RevealError(f"time runs backwards: {t_ms} ms after {self._now} ms")
        return t_ms

    @property
    def records(self) -> int:
        """How many records are on disk: each was fsynced (only flushed if not ``durable``)
        before the call that wrote it returned."""
        return self._writer.seq

    @property
    def t_ms(self) -> int:
        """The time of the last record written."""
        return self._writer.t_ms

    @property
    def now(self) -> int:
        """The table's clock: the last record's time, or a later one ``advance`` gave."""
        return self._now

    @property
    def head(self) -> Seen:
        """The last record written, as a client that has seen it names it in a submission."""
        head = self._writer.head
        assert head is not None  # the genesis is written as the table is created
        return head

    def next_n(self, seat: int) -> int:
        """The number the seat's next submission must carry."""
        return self._next_n[seat]

    def advance(self, t_ms: int) -> None:
        """Move the clock to ``t_ms``: end every hand whose deadline came first. A time
        before the table's clock is TableError ``CLOCK_BACKWARDS``, and nothing changes."""
        self._not_before_now(t_ms)
        self._now = t_ms
        while not self.played_out:
            deadline = self._flow.deadline()
            if deadline is None or deadline > t_ms:
                self._flow = self._flow.at(t_ms)
                return
            self._flow = self._flow.at(deadline)
            self._record_due(deadline)

    @property
    def deadline(self) -> int | None:
        """When a time rule next ends the hand in play if nothing happens first (the call's
        grace running out, the three-minute rule, the idle abandon): the time a server's
        timer passes to ``advance``; None when no rule is pending or the match is over."""
        return None if self.played_out else self._flow.deadline()

    @property
    def abandons_at(self) -> int | None:
        """When the rules abandon the match if no action comes first (the last action's
        time plus ``time.idle_abandon_ms``); None when the rules define no idle time, when
        the hand in play ends by another deadline first, or when the match is over."""
        if self.played_out or self._flow.rules.idle_abandon_ms is None:
            return None
        due = next_deadline(self.state)
        if due is None or due[1] is not EndReason.ABANDONED:
            return None
        return due[0]

    def abandon(self, t_ms: int) -> None:
        """End the match at ``t_ms`` as the rules end an abandoned table: with no result
        (final reason ``abandoned``), the final record written (held, at a tournament's
        table). Only where the rules define an idle time (``time.idle_abandon_ms``:
        peer2peer's five minutes) and nothing has happened for that long
        (``abandons_at`` is at or before ``t_ms``); it is then ``advance(t_ms)``.
        Otherwise TableError, and nothing is written: ``NO_IDLE_RULE`` under rules without
        an idle time (the table and Nertz rules end a match only at its target or hand
        limit: ``close`` leaves the log a valid, unfinished prefix), ``NOT_IDLE`` before
        the idle time is over, ``PLAYED_OUT`` once the match is over,
        ``CLOCK_BACKWARDS`` for a time before the table's clock (docs/rules.md §11)."""
        rules = self._flow.rules
        if self.played_out:
            raise TableError("the match is over: nothing to abandon", TableCode.PLAYED_OUT)
        if rules.idle_abandon_ms is None:
            raise TableError(
                f"the {rules.name} rules define no idle time (time.idle_abandon_ms): their "
                "match ends only at its target or hand limit; close() leaves the log an "
                "unfinished prefix",
                TableCode.NO_IDLE_RULE,
            )
        self._not_before_now(t_ms)
        at = self.abandons_at
        if at is None or at > t_ms:
            why = (
                "the hand in play ends by another rule first"
                if at is None
                else f"the rules abandon it at {at} ms, if nothing happens before"
            )
            raise TableError(f"the match is not abandoned at {t_ms} ms: {why}", TableCode.NOT_IDLE)
        self.advance(t_ms)

    def note(self, payload: Note, t_ms: int) -> bool:
        """Write ``payload``, a record the match does not see (format v3: a pause, the
        seats' round trips), at ``t_ms``, after every record the clock makes due by then
        (``advance``). Whether it was written: not once the match is played out, since the
        final record counts the records before it, nor in a log of a format without notes
        (a v2 match resumed). A time before the table's clock is TableError
        ``CLOCK_BACKWARDS``, and nothing is written."""
        self.advance(t_ms)
        if self.played_out or self.version < NOTE_VERSION:
            return False
        self._writer.append(t_ms, payload, {})
        return True

    def submit(
        self,
        seat: int,
        move_text: str,
        t_ms: int,
        n: int,
        signature: str | None = None,
        seen: Seen | None = None,
        refused: SubmissionCode | None = None,
    ) -> Outcome:
        """Check one submission, record it as accepted or bounced, and apply what follows;
        the outcome carries the receipt to hand back to the player at once.

        ``seen`` is the last record the seat's client had seen (its ``head`` then), which a
        keyed player signs with its move; an unkeyed seat's defaults to the table's head.
        Raises SubmissionError, with the receipt of the refusal, for a submission that
        cannot be logged at all, and for one its host ``refused`` unjudged (a rate limit).
        """

        def refuse(message: str, code: SubmissionCode) -> NoReturn:
            receipt = self._refusal(seat, n, move_text, seen, t_ms, code)
            raise SubmissionError(message, code, receipt)

        if refused is not None:
            refuse("refused by the table's host, unjudged", refused)
        if t_ms < self._now:
            backwards = f"time runs backwards: {t_ms} ms after {self._now} ms"
            refuse(backwards, SubmissionCode.TIME_BACKWARDS)
        self.advance(t_ms)
        if self._held is not None:
            # Played out, its final record not yet written: the receipt names the last
            # hand_end, which the final record will follow.
            refuse(
                f"the match is played out: its final record is held until the reveal "
                f"(its last hand_end is seq {self.head.seq})",
                SubmissionCode.FINAL_HELD,
            )
        if self.finished:
            refuse("the match is over", SubmissionCode.MATCH_OVER)
        if not 0 <= seat < len(self._players):
            refuse(f"there is no seat {seat}", SubmissionCode.NO_SUCH_SEAT)
        if n != self._next_n[seat]:
            refuse(
                f"seat {seat}'s next submission is {self._next_n[seat]}",
                SubmissionCode.WRONG_NUMBER,
            )
        try:
            move = Move.parse(move_text)
        except ValueError as error:
            refuse(str(error), SubmissionCode.BAD_MOVE_TEXT)
        if move.seat != seat:
            refuse(f"{move_text!r} is not a move of seat {seat}", SubmissionCode.NOT_ITS_MOVE)
        keyed = self._players[seat].key is not None
        if seen is None:
            if keyed:
                refuse(
                    f"seat {seat} signs the record it had seen: seen is missing",
                    SubmissionCode.SEEN_MISSING,
                )
            seen = self.head
        if not well_formed(seen) or self._writer.hash_of(seen.seq) != seen.hash:
            refuse(
                f"seat {seat} names as seen {seen!r}, which is not one of the last "
                f"{SEEN_WINDOW} records of this log",
                SubmissionCode.SEEN_UNKNOWN,
            )
        statement = self._statement(seat, n, move_text, seen)
        key = self._players[seat].key
        problem = signature_problem(key, seat, statement, signature, self.version)
        if problem is not None:
            refuse(*problem)
        sigs = {} if signature is None else {"player": signature}
        event, self._flow = self._flow.submit(seat, n, move, move_text, seen)
        bounced, state = event.kind is RecordKind.BOUNCE, self.state
        if bounced and self.version >= LOST_TO_VERSION:
            race = self._races.lost_to(state, seat, event.reason, move)
            event = replace(event, lost_to=None if race is None else race.record)
        self._next_n[seat] += 1
        record, line = self._writer.append(t_ms, event, sigs)
        line_hash = chain_hash(line)
        if not bounced:
            self._races.logged(record.seq, line_hash, move, state)
        receipt = logged_receipt(record, line, statement)
        self._record_due(t_ms)
        sealed = seal_receipt(receipt, self._key)
        return Outcome(event.kind, event.reason, record.seq, line_hash, sealed)

    def close(self) -> None:
        """Stop writing (a match left unfinished stays a valid, unfinished prefix)."""
        self._writer.close()

    def __enter__(self) -> Table:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------

    def _refusal(
        self, seat: int, n: int, move_text: str, seen: Seen | None, t_ms: int, code: SubmissionCode
    ) -> bytes | None:
        """The receipt of a refused submission; None when nobody sits at ``seat`` to keep it,
        or the submission holds what no receipt can (a negative number, say)."""
        if not 0 <= seat < len(self._players):
            return None
        named = seen if well_formed(seen) else None  # else nothing the log could hold
        head, head_body = self.head, self._writer.head_body
        assert head_body is not None  # the genesis is written as the table is created
        try:
            statement = self._statement(seat, n, move_text, named)
            refused = refused_receipt(
                self._game, seat, n, statement, t_ms, code.value, head.seq, head_body
            )
            receipt = seal_receipt(refused, self._key)
        except ValueError:  # not canonical JSON (a lone surrogate, an integer too large)
            return None
        return receipt if not checked_errors("receipt", json.loads(receipt)) else None

    def _not_before_now(self, t_ms: int) -> None:
        """TableError CLOCK_BACKWARDS for a time before the table's clock."""
        if t_ms < self._now:
            backwards = f"the clock runs backwards: {t_ms} ms after {self._now} ms"
            raise TableError(backwards, TableCode.CLOCK_BACKWARDS)

    def _statement(self, seat: int, n: int, move_text: str, seen: Seen | None) -> bytes:
        """The canonical bytes of the statement a seat signs for this submission, in the
        hand in play (a submission names no hand of its own)."""
        return canonical_bytes(
            submission_statement(self._game, self.state.hand, seat, n, move_text, seen)
        )

    def _record_due(self, t_ms: int) -> None:
        """Write every record the flow makes due at ``t_ms``: stall shifts, the hand's end,
        the next deal, the final record."""
        while (event := self._flow.due()) is not None:
            if isinstance(event, MatchEnd):
                final = Final(end=event, secret=self._secret.hex(), records=self._writer.seq)
                if self._hold_final:
                    self._held = final  # written by reveal()
                else:
                    self._write_final(final, t_ms)
                return
            self._flow = self._flow.play(event, t_ms)
            if isinstance(event, HandStart):
                self._races.deal()
            self._writer.append(t_ms, event, {})

    def _write_final(self, final: Final, t_ms: int) -> None:
        """Write the final record, with every keyed seat's acceptance, and close the log."""
        accepts: dict[str, Any] = {}  # asked before anything changes
        if self._signers is not None:
            body = self._writer.next_body(t_ms, final)
            accepts["accepts"] = acceptances(self._players, self._signers, body, self.version)
        self._writer.append(t_ms, final, accepts)
        self._flow = self._flow.play(final.end, t_ms)
        self._writer.close()
