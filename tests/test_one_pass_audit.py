"""Issue 30, point 1: "A log is read once, by one reader, and every command visits that one
pass" -- "audit, evidence ... become visitors of the one verified pass, and each command
opens each log file once (a test counts the opens with an audit hook, `sys.addaudithook`).
The copy and receipt checks in the evidence reuse the verifier's steps."

`racing-demon audit` opens the audited log once in every variant (plain, --claim,
--receipts, --against), and each copy passed with --against once too, whether the log
verifies or not; the evidence's table-signed chain is told on verification's pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from racing_demon import replay
from racing_demon.audit_run import AuditRun, audit_log
from racing_demon.game.flow import MatchFlow, RecordKind
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.log.reader import Line
from racing_demon.log.records import Record
from racing_demon.verify import Settings, Verdict, verify_log
from racing_demon.verify.table_chain import ChainBroken

from opens import count_opens

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
TABLE_PUB = str(SAMPLES / "table.pub")
NERTZ = SAMPLES / "valid" / "nertz-4p-demon-empty-signed.jsonl"
NERTZ_RECEIPTS = [
    SAMPLES / "valid" / f"nertz-4p-demon-empty-signed.seat{s}.receipts.jsonl" for s in range(4)
]
DELAYED = SAMPLES / "disputed" / "delayed-submission.jsonl"  # NERTZ's game, a submission late
WRONG_CLAIM = SAMPLES / "disputed" / "wrong-claim.jsonl"
CLAIM = SAMPLES / "disputed" / "wrong-claim.claim.json"
FORKED_RECEIPTS = SAMPLES / "disputed" / "forked-history.seat2.receipts.jsonl"
ILLEGAL = SAMPLES / "disputed" / "illegal-move-re-signed.jsonl"  # forked-history's game
FORGED = SAMPLES / "disputed" / "forged-move-signed-by-another-player.jsonl"
BOUNCED = SAMPLES / "disputed" / "legal-move-wrongly-bounced.jsonl"  # FORGED's game
SWAPPED = SAMPLES / "disputed" / "swapped-records.jsonl"  # forked-history's game


def _receipts(*paths: Path) -> list[str]:
    return [part for path in paths for part in ("--receipts", str(path))]


_AUDITS = [
    (NERTZ, [], [], 0),
    (NERTZ, [], ["--json"], 0),
    (WRONG_CLAIM, [], ["--claim", str(CLAIM)], 1),
    (NERTZ, [], _receipts(*NERTZ_RECEIPTS), 0),
    (NERTZ, [DELAYED], [], 1),
    (DELAYED, [NERTZ], [*_receipts(*NERTZ_RECEIPTS), "--json"], 1),
    # Logs that do not verify: a replay failure, a player's signature, a broken chain
    # (whose evidence reads on past the verifier's refusal).
    (ILLEGAL, [], [], 1),
    (ILLEGAL, [], _receipts(FORKED_RECEIPTS), 1),
    (FORGED, [], [], 1),
    (FORGED, [BOUNCED], [], 1),
    (SWAPPED, [ILLEGAL], _receipts(FORKED_RECEIPTS), 1),
]


def test_audit_opens_its_log_and_each_copy_once(tmp_path: Path) -> None:
    runs = [
        [
            "audit",
            str(log),
            "--table-key",
            TABLE_PUB,
            *options,
            *[part for copy in copies for part in ("--against", str(copy))],
        ]
        for log, copies, options, _ in _AUDITS
    ]
    for (log, copies, options, exit_code), opened in zip(
        _AUDITS, count_opens(tmp_path, runs), strict=True
    ):
        case = (log.name, [copy.name for copy in copies], options)
        assert opened.status == exit_code, case
        assert [opened.reads(path) for path in (log, *copies)] == [1] * (1 + len(copies)), case


def test_audit_follows_the_replay_once_for_its_hands_and_its_races(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The hands and the contested plays are read from one replay's snapshots: each record
    is followed once (``replay.follow``), not once for each."""
    followed: list[int] = []
    real_follow = replay.follow

    def counting(
        snapshot: replay.Snapshot, record: Record, flow: MatchFlow, line_hash: str
    ) -> None:
        followed.append(record.seq)
        real_follow(snapshot, record, flow, line_hash)

    monkeypatch.setattr(replay, "follow", counting)
    key = raw_public_bytes(load_public_key(Path(TABLE_PUB)))
    audit = audit_log(AuditRun(log=NERTZ, table_key=key))
    assert audit.report.verdict is Verdict.VERIFIED
    assert audit.hands and audit.contests and audit.report.records is not None
    assert followed == list(range(audit.report.records))


class _Chain:
    """A ``LineVisitor`` that keeps what it is told."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, RecordKind]] = []
        self.broken: list[ChainBroken] = []

    def chained(self, line: Line, record: Record) -> None:
        assert not self.broken
        self.lines.append((line.number, record.kind))

    def unchained(self, broken: ChainBroken) -> None:
        self.broken.append(broken)


def _chain(log: Path) -> tuple[Verdict, _Chain]:
    settings = Settings(table_key=raw_public_bytes(load_public_key(Path(TABLE_PUB))))
    chain = _Chain()
    report = verify_log(log, settings, line_visitors=[chain])
    assert report == verify_log(log, settings)  # the chain changes no verdict
    return report.verdict, chain


def test_the_chain_goes_on_past_a_line_only_a_player_signature_spoils() -> None:
    """The evidence is what the table signed: a move signed by another player fails the
    log's verification (step 5), but the table signed it and every line after it."""
    verdict, chain = _chain(FORGED)
    assert verdict is Verdict.DOES_NOT_VERIFY
    lines = FORGED.read_bytes().splitlines()
    assert [number for number, _ in chain.lines] == list(range(1, len(lines) + 1))
    assert chain.lines[-1][1] is RecordKind.FINAL and chain.broken == []


def test_the_chain_stops_where_the_table_signed_no_history() -> None:
    """Two records swapped: the table signed each, but not as one history (step 4's seq)."""
    verdict, chain = _chain(SWAPPED)
    assert verdict is Verdict.DOES_NOT_VERIFY
    (broken,) = chain.broken
    assert broken.code == "SEQ_MISMATCH"
    assert broken.line == len(chain.lines) + 1
    assert str(broken).startswith(f"line {broken.line}: SEQ_MISMATCH: seq ")


def test_a_verified_log_is_one_whole_chain() -> None:
    verdict, chain = _chain(NERTZ)
    assert verdict is Verdict.VERIFIED and chain.broken == []
    assert len(chain.lines) == len(NERTZ.read_bytes().splitlines())


def test_line_visitors_need_every_table_signature() -> None:
    with pytest.raises(ValueError, match="table's key"):
        verify_log(NERTZ, Settings(unsafe_unpinned=True), line_visitors=[_Chain()])
