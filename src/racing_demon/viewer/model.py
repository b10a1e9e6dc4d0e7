"""The game model a viewer page embeds (``format: racing-demon/viewer/v1``): the log's bytes,
the verifier's verdict, the table after every replayed record as deltas, every record in
words, and the audit of every hand (schemas/viewer-data.schema.json).

The table comes from ``racing_demon.replay`` and the verdict from ``racing_demon.verify``,
so the page shows what ``replay --at SEQ`` and ``verify --json`` show. Every line of the log
gets its words, also past the record where replay stops: those are told from the record's
own body, without the table. This module puts the page's data together: the lines are read
by ``viewer.lines``, the words are ``viewer.words``, the frames ``viewer.frames``; no HTML
here: ``viewer.page`` makes the page.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any, BinaryIO

from racing_demon.audit import audit_hand
from racing_demon.files import LogFile, open_log, shown_name
from racing_demon.game.cards import Card
from racing_demon.game.flow import (
    FlowRefusal,
    HandEnd,
    MatchFlow,
    RecordKind,
    Submission,
)
from racing_demon.game.scoring import HandScore, score_hand
from racing_demon.game.state import Phase, State
from racing_demon.log.reader import Limits, Line, ReadError
from racing_demon.log.records import Final, Genesis, Record, chain_hash
from racing_demon.printing import printable
from racing_demon.profiles import ProfileError, differences_from_builtin, rules_from_document
from racing_demon.races import Races, contest_document
from racing_demon.replay import ReplayError, Snapshot, follow, replay
from racing_demon.report_document import report_document
from racing_demon.verify import Report, Settings, Verdict, verify_stream
from racing_demon.viewer.frames import KEYFRAME_EVERY, Frames
from racing_demon.viewer.lines import LogLine, genesis_and_final, raw_lines, read_line
from racing_demon.viewer.page import Packer, json_text, unpacked
from racing_demon.viewer.words import Teller, Words

VIEWER_FORMAT = "racing-demon/viewer/v1"
# Okabe and Ito's palette, which people with any common colour blindness tell apart.
SEAT_COLOURS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
_READ_PIECE = 1 << 20


# A back that names a colour is drawn in the palette's nearest colour, so that a seat whose
# pack has a red back is not shown in blue.
_BACK_COLOURS = {
    "blue": "#0072B2",
    "orange": "#E69F00",
    "green": "#009E73",
    "pink": "#CC79A7",
    "purple": "#CC79A7",
    "sky": "#56B4E9",
    "red": "#D55E00",
    "yellow": "#F0E442",
    "black": "#000000",
}


def seat_colours(backs: Sequence[str]) -> list[str]:
    """Each seat's colour: the palette's colour its back names (``red``, ``light blue``…),
    unless an earlier seat has it; otherwise the first palette colour no seat has yet, and
    the palette in seat order again past eight seats."""
    colours: list[str] = []
    for back in backs:
        named = next(
            (colour for word, colour in _BACK_COLOURS.items() if word in back.lower().split()),
            None,
        )
        free = [colour for colour in SEAT_COLOURS if colour not in colours]
        if named is not None and named not in colours:
            colours.append(named)
        else:
            colours.append(free[0] if free else SEAT_COLOURS[len(colours) % len(SEAT_COLOURS)])
    return colours


# -- the audit ---------------------------------------------------------------------------


@dataclass
class _Audit:
    """Every hand the replay closes as ``audit.audit_hand`` audits it (the audit
    ``racing-demon audit`` prints), as the page holds it."""

    hands: list[dict[str, Any]] = field(default_factory=list)
    totals: list[list[int]] = field(default_factory=list)

    def add(
        self,
        scored: HandScore,
        placed: Mapping[Card, int],
        end: HandEnd,
        end_seq: int,
        names: Sequence[str],
        *,
        replayed: bool = True,
    ) -> None:
        if not self.totals:
            self.totals.append([0] * len(scored.seats))
        audited = audit_hand(scored, placed, end, end_seq, names, self.totals[-1])
        self.totals.append([seat.total for seat in audited.seats])
        self.hands.append(
            {
                "hand": audited.hand,
                "end_seq": audited.end_seq,
                "reason": audited.reason,
                "ended_by": scored.ended_by,
                "replayed": replayed,
                "seats": [
                    {
                        "seat": seat.seat,
                        "placed": [{"card": card.face, "seq": seq} for card, seq in seat.placed],
                        "demon_left": len(seat.demon_left),
                        "placed_points": seat.placed_points,
                        "penalty": seat.demon_penalty,
                        "score": seat.score,
                        "claimed": seat.claimed_score,
                    }
                    for seat in audited.seats
                ],
            }
        )


def _refused_hand(flow: MatchFlow | None, record: Record) -> HandScore | None:
    """The hand a refused hand_end closes, scored as it stands at that record's time: so a
    hand_end that claims wrong scores still shows the recomputed ones beside them."""
    if flow is None or not isinstance(record.payload, HandEnd):
        return None
    try:
        state = flow.at(record.t_ms).state
    except (FlowRefusal, ValueError):
        return None
    if state is None or state.phase is not Phase.ENDED:
        return None
    return score_hand(state)


# -- the whole model ---------------------------------------------------------------------


def _read_within(stream: BinaryIO, limit: int) -> bytes | None:
    """The bytes of ``stream``, or None when it holds more than ``limit``, read no further
    than one byte past it."""
    pieces = []
    read = 0
    # In pieces: one read of limit + 1 bytes would set aside that much (64 MiB by default)
    # whatever the file holds.
    while read <= limit and (piece := stream.read(min(_READ_PIECE, limit + 1 - read))):
        pieces.append(piece)
        read += len(piece)
    return None if read > limit else b"".join(pieces)


def viewer_data(log: LogFile, settings: Settings, report: Report | None = None) -> dict[str, Any]:
    """The page's data for ``log`` (a file, or standard input's bytes), verified with
    ``settings`` (or as ``report`` says, when the caller already verified it), as the
    schema describes it: ``page_data`` unpacked. OSError when the file cannot be read at
    all."""
    data: dict[str, Any] = unpacked(page_data(log, settings, report))
    return data


def page_data(log: LogFile, settings: Settings, report: Report | None = None) -> dict[str, Any]:
    """The page's data as the page holds it: the records, frames and audit already packed
    (``viewer.page.packed``). They are told, framed and packed record by record, so that
    what is held grows by a few hundred bytes a record (docs/viewer.md, "Memory"): the
    log's bytes, its copy for the page, and the packed text. OSError when the file cannot
    be read at all."""
    return verified_page_data(log, settings, report)[1]


def verified_page_data(
    log: LogFile, settings: Settings, report: Report | None = None
) -> tuple[Report, dict[str, Any]]:
    """``page_data`` and the verifier's report on the log (``report``, when the caller
    already verified it). The log is opened once: its bytes, read for the page, are what
    is verified and replayed, unless it is past the file-size limit (the page then holds
    none of it, and the verifier reads the same open file from its start to say so).
    OSError when the log cannot be opened."""
    with open_log(log) as stream:
        data = _read_within(stream, settings.limits.max_file_bytes)
        if report is None and data is None:
            stream.seek(0)
            report = verify_stream(stream, settings, shown_name(log))
    if report is not None:
        return report, _page_data(log, settings, report, data)
    assert data is not None  # past the limit, the report was made above
    # The page is told and framed on the verifier's pass; a log that does not verify is
    # replayed again from its bytes, up to the first refused record, as the page shows it.
    visitor = _PageVisitor(_Told.start(data, settings.limits))
    report = verify_stream(io.BytesIO(data), settings, shown_name(log), visitors=(visitor,))
    told = visitor.told if visitor.whole else None
    return report, _page_data(log, settings, report, data, told)


@dataclass
class _Told:
    """The page's frames, lines and audit as the replay tells them, record by record."""

    genesis: Record | None
    final: Final | None
    limits: Limits
    packer: Packer
    frames: Frames
    entries: _Entries
    audit: _Audit
    lines: Iterator[tuple[int, bytes]]
    races: Races = field(default_factory=Races)
    before: State | None = None
    flow: MatchFlow | None = None

    @classmethod
    def start(cls, data: bytes | None, limits: Limits) -> _Told:
        genesis, final = (None, None) if data is None else genesis_and_final(data, limits)
        teller = Teller()
        if genesis is not None:
            assert isinstance(genesis.payload, Genesis)
            teller.names = tuple(entry.name for entry in genesis.payload.players)
        packer = Packer()
        packer.write(f'{{"frames":{{"keyframe_every":{KEYFRAME_EVERY},"list":[')
        lines = iter(()) if data is None else enumerate(raw_lines(data))
        return cls(
            genesis, final, limits, packer, Frames(packer), _Entries(teller), _Audit(), lines
        )

    def tell(self, snapshot: Snapshot) -> bool:
        """Frame and tell the record ``snapshot`` is the table after; False when the
        bytes hold no line for it."""
        record = snapshot.record
        assert record is not None  # every snapshot replay yields holds its record
        after = snapshot.state
        following = next(self.lines, None)
        if following is None:
            return False
        words = self.entries.teller.tell(record, self.before, after, snapshot.placed)
        self.entries.add(read_line(*following, self.limits), words, frame=self.frames.count)
        self.frames.add(record, after)
        if isinstance(record.payload, HandEnd):
            scored, placed = snapshot.hands[-1]
            self.audit.add(scored, placed, record.payload, record.seq, snapshot.names)
        self.races.see(record, snapshot)
        self.before, self.flow = after, snapshot.flow
        return True


@dataclass
class _PageVisitor:
    """``_Told`` on the verifier's pass (a ``PassVisitor``): kept only when the whole log
    verifies, since the page of any other shows what ``replay`` shows, up to its refusal."""

    told: _Told
    snapshot: Snapshot = field(default_factory=Snapshot)
    whole: bool = False
    spoiled: bool = False  # pass two started over, or a record had no line

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        self.spoiled = self.spoiled or (record.seq == 0 and self.snapshot.record is not None)
        if not self.spoiled:
            follow(self.snapshot, record, flow, chain_hash(line.raw))
            self.spoiled = not self.told.tell(self.snapshot)

    def end(self, report: Report) -> None:
        self.whole = report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED) and not self.spoiled


def _page_data(
    log: LogFile,
    settings: Settings,
    report: Report,
    data: bytes | None,
    told: _Told | None = None,
) -> dict[str, Any]:
    given = settings.seed is not None
    if told is None:
        told = _Told.start(data, settings.limits)
        final = told.final
        secret = settings.seed or (None if final is None else bytes.fromhex(final.secret))
        if secret is not None and data is not None:
            _replay(data, secret, settings, told)
    else:
        final = told.final
        secret = settings.seed or (None if final is None else bytes.fromhex(final.secret))
    genesis, packer, frames, entries, audit = (
        told.genesis,
        told.packer,
        told.frames,
        told.entries,
        told.audit,
    )
    for index, raw in told.lines:
        entries.add(read_line(index, raw, settings.limits))
    packer.write(']},"records":[')
    if entries.readable:  # a file that holds no record at all is no log to tell line by line
        packer.write_from(entries.packer)
    packer.write(
        '],"audit":'
        + json_text(
            {
                "hands": audit.hands,
                "totals": audit.totals,
                "claimed_totals": None if final is None else list(final.end.totals),
                # As audit lists them: for a log that verifies (pinned or not) only.
                "contests": [contest_document(contest) for contest in told.races.contests]
                if report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED)
                else [],
            }
        )
        + "}"
    )
    return {
        "format": VIEWER_FORMAT,
        "software": f"racing-demon {version('racing-demon')}",
        "source": printable(log.name if isinstance(log, Path) else str(log)),
        "log": None if data is None else _log_entry(data),
        "table_key": None if settings.table_key is None else settings.table_key.hex(),
        "verdict": report_document(report),
        "failure": _failure(report),
        "game": None if genesis is None else _game(genesis, report),
        "replay": {
            "records": entries.count if entries.readable else 0,
            "replayed": frames.count,
            "secret": "given" if given else "missing" if secret is None else "revealed",
            "hand_ends_not_replayed": entries.hand_ends,
            "first_hand_end_not_replayed": entries.first_hand_end,
        },
        "packed": packer.packed(),
    }


def _replay(data: bytes, secret: bytes, settings: Settings, told: _Told) -> None:
    """Replay up to the first record the flow refuses, framing and telling each; the lines
    replayed are taken from ``told.lines``, which holds the rest after."""
    snapshot: Snapshot | None = None
    try:
        for snapshot in replay(io.BytesIO(data), secret, settings.limits):
            if not told.tell(snapshot):
                break  # the file grew since it was read: the page shows what was read
    except ReplayError as error:
        refused = error.record
        closed = None if refused is None else _refused_hand(told.flow, refused)
        if closed is not None and refused is not None and isinstance(refused.payload, HandEnd):
            assert snapshot is not None  # a flow to score the hand in comes from a snapshot
            told.audit.add(
                closed,
                snapshot.placed,
                refused.payload,
                refused.seq,
                snapshot.names,
                replayed=False,
            )
    except ReadError:
        pass  # the lines from here on are told from their bodies, or as unreadable


class _Entries:
    """Every line of the log as the page lists it, packed as it comes (into a scratch
    ``Packer``: the page's data holds them after the frames, which come at the same time)."""

    def __init__(self, teller: Teller) -> None:
        self.teller = teller
        self.packer = Packer(compresslevel=1)
        self.count = 0
        self.readable = False
        # The hand_end records the replay did not reach, for the page to say what was not
        # replayed where it has no hand to score.
        self.hand_ends = 0
        self.first_hand_end: int | None = None

    def add(self, line: LogLine, words: Words | None = None, frame: int | None = None) -> None:
        record = line.record
        if record is not None:
            self.readable = True
            if frame is None and record.kind is RecordKind.HAND_END:
                self.hand_ends += 1
                if self.first_hand_end is None:
                    self.first_hand_end = record.seq
        entry = _record_entry(line, words, self.teller, frame)
        self.packer.write(("," if self.count else "") + json_text(entry))
        self.count += 1


def _record_entry(
    line: LogLine, words: Words | None, teller: Teller, frame: int | None
) -> dict[str, Any]:
    record = line.record
    if record is None:
        return {
            "seq": line.index,
            "line": line.index + 1,
            "t_ms": None,
            "kind": None,
            "hand": None,
            "seat": None,
            "text": f"record {line.index} could not be read: {line.problem}",
            "links": [],
            "piles": [],
            "frame": None,
        }
    words = words or teller.tell(record)
    payload = record.payload
    return {
        "seq": record.seq,
        "line": line.index + 1,
        "t_ms": record.t_ms,
        "kind": str(record.kind),
        "hand": getattr(payload, "hand", None) if not isinstance(payload, Genesis) else None,
        "seat": payload.seat if isinstance(payload, Submission) else None,
        "text": words.text,
        "links": list(words.links),
        "piles": list(words.piles),
        "frame": frame,
    }


def _log_entry(data: bytes) -> dict[str, Any]:
    packed = gzip.compress(data, compresslevel=9, mtime=0)
    return {
        "encoding": "gzip+base64",
        "data": base64.b64encode(packed).decode("ascii"),
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
    }


def _failure(report: Report) -> dict[str, Any] | None:
    finding = report.finding
    if finding is None:
        return None
    seq = finding.seq
    if seq is None and finding.line is not None:
        seq = finding.line - 1
    return {
        "seq": seq,
        "line": finding.line,
        "step": None if report.step is None else report.step.value,
        "code": finding.code.value,
        "message": finding.message,
    }


def _rules_changes(document: Mapping[str, Any]) -> list[str] | None:
    """What the rules change in the built-in profile they are a variant of, a line a field
    (``profiles.differences_from_builtin``); None for a document that is no valid profile
    or is a variant of none."""
    try:
        changes = differences_from_builtin(rules_from_document(document))
    except ProfileError:
        return None
    return None if changes is None else [printable(change) for change in changes]


def _game(record: Record, report: Report) -> dict[str, Any]:
    payload = record.payload
    assert isinstance(payload, Genesis)
    document = payload.rules
    title = document.get("title")
    layout = document.get("layout")
    work_piles = layout.get("work_piles") if isinstance(layout, Mapping) else None
    facts = report.rules
    tag = payload.tournament
    return {
        "id": record.game,
        "format_version": record.v,
        # A tournament's table: the page's header names the tournament and the table.
        "tournament": None
        if tag is None
        else {
            "name": printable(tag.name),
            "table": tag.table,
            "tables": tag.tables,
            "hands": tag.hands,
            "plan": tag.plan,
        },
        "rules": {
            "name": None if facts is None or facts.name is None else printable(facts.name),
            "title": printable(title) if isinstance(title, str) else None,
            "sha256": None if facts is None else facts.sha256,
            "builtin": None if facts is None else facts.builtin,
            "changes": _rules_changes(document),
        },
        "work_piles": work_piles if isinstance(work_piles, int) else None,
        "seats": [
            {
                "seat": entry.seat,
                "name": printable(entry.name),
                "back": printable(entry.back),
                "colour": colour,
                "key": entry.key,
            }
            for entry, colour in zip(
                payload.players,
                seat_colours([entry.back for entry in payload.players]),
                strict=True,
            )
        ],
    }
