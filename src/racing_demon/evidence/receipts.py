"""Judging each receipt against the log's facts, and receipts against each other: forks,
delays, drops, mismatches, refusals the log disproves and stale heads."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from racing_demon.evidence.findings import (
    NAMED_BY,
    Entry,
    EvidenceCode,
    EvidenceFinding,
    in_ms,
    place,
    short,
)
from racing_demon.evidence.scan import ChainScanner, Facts
from racing_demon.game.flow import RecordKind
from racing_demon.log.receipts import (
    LINE_RECEIPT_VERSION,
    Receipt,
    ReceiptLine,
    SubmissionCode,
)
from racing_demon.wording import plural


def _said(file: str, item: ReceiptLine) -> Entry:
    receipt = item.receipt
    return Entry(
        file=file,
        line=item.line,
        seq=receipt.seq,
        record=receipt.record,
        t_ms=receipt.t_ms,
        by=NAMED_BY[receipt.v],
    )


def _named(receipt: Receipt) -> str:
    return f"{'line' if receipt.v == LINE_RECEIPT_VERSION else 'body'} {short(receipt.record)}"


class Judge:
    """Each receipt, and receipts between themselves, held to the facts that the log's
    table-signed chain (``scanner``, whole) gives; ``log`` is the log's shown name."""

    def __init__(self, log: str, scanner: ChainScanner) -> None:
        self.log = log
        self.scan = scanner.scan
        self.by_seq = scanner.by_seq
        self.by_submission = scanner.by_submission
        self.next_n = scanner.next_n  # (seq, seat) -> the seat's next n after record seq
        self.following = scanner.following
        self.earliest_after = scanner.earliest_after()
        self.tournament = scanner.tournament

    def _entry(self, facts: Facts, v: int) -> Entry:
        return Entry(
            file=self.log,
            line=facts.line,
            seq=facts.line - 1,
            record=facts.named(v),
            t_ms=facts.t_ms,
            by=NAMED_BY[v],
        )

    def _end(self) -> str:
        if self.scan.finished:
            return f"the finished log has {plural(self.scan.records, 'record')}"
        if self.scan.damage is None:
            return f"the unfinished log has {plural(self.scan.records, 'record')} so far"
        return (
            f"the log is a table-signed chain for {plural(self.scan.records, 'record')} only "
            f"({self.scan.damage})"
        )

    def receipt(self, file: str, item: ReceiptLine) -> Iterator[EvidenceFinding]:
        receipt = item.receipt
        said = _said(file, item)
        where = f"receipt {place(file, item.line)}"
        claim = (
            f"says logged as seq {receipt.seq} ({receipt.outcome}, {_named(receipt)}) at "
            f"{in_ms(receipt.t_ms)}"
            if receipt.logged
            else f"says refused ({receipt.reason}) at {in_ms(receipt.t_ms)} when the log ended "
            f"at seq {receipt.seq} ({_named(receipt)})"
        )

        def finding(
            code: EvidenceCode, message: str, compared: Entry | None = None
        ) -> EvidenceFinding:
            return EvidenceFinding(
                code=code,
                file=file,
                line=item.line,
                seat=receipt.seat,
                n=receipt.n,
                said=said,
                compared=compared,
                message=message,
            )

        if self.scan.game is None:
            yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")
            return
        if receipt.game != self.scan.game:
            yield finding(
                EvidenceCode.OTHER_GAME,
                f"a receipt of game {receipt.game}; the log is of game {self.scan.game}",
            )
            return
        facts = self.by_seq.get(receipt.seq)
        if facts is None:  # past the end of the chain
            if not receipt.logged and self.scan.finished:
                yield finding(
                    EvidenceCode.FORK,
                    f"{where} {claim}; {self._end()}: the table signed a longer history",
                )
                return
            if receipt.logged:
                yield from self._locate(finding, where, claim, receipt)
            elif self.scan.damage is None:
                yield finding(EvidenceCode.NOT_YET_LOGGED, f"{where} {claim}; {self._end()}")
            else:
                yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")
            return
        line = self._entry(facts, receipt.v)
        if facts.named(receipt.v) != receipt.record:
            theirs = (
                f"the log's seq {receipt.seq} is a {facts.kind} record "
                f"({line.by} {short(line.record)}) at {in_ms(facts.t_ms)}"
            )
            if receipt.v == LINE_RECEIPT_VERSION and facts.line == self.scan.records:
                yield finding(
                    EvidenceCode.LAST_LINE_CHANGED,
                    f"{where} {claim}; {theirs}, the last line of its table-signed chain: a "
                    "v2 receipt names the whole line, signatures included, and no later "
                    "record fixes this one's (an acceptance dropped changes it): no evidence",
                    line,
                )
            else:
                yield finding(
                    EvidenceCode.FORK, f"{where} {claim}; {theirs}: the table signed both", line
                )
            if receipt.logged:
                yield from self._locate(finding, where, claim, receipt, forked=True)
            return
        if not receipt.logged:
            yield from self._refusal(finding, where, claim, receipt, facts, line)
            return
        if (facts.seat, facts.n, facts.submission) != (
            receipt.seat,
            receipt.n,
            receipt.submission,
        ):
            if facts.seat is None:
                theirs = f"a {facts.kind} record"
            else:
                theirs = f"seat {facts.seat}'s submission n {facts.n}"
                if facts.submission != receipt.submission:
                    theirs += f" (statement {short(facts.submission or '')})"
            yield finding(
                EvidenceCode.RECEIPT_MISMATCH,
                f"{where} {claim} for statement {short(receipt.submission)}; that record is "
                f"{theirs}",
                line,
            )
            yield from self._locate(finding, where, claim, receipt, forked=True)
            return
        if (facts.kind, facts.reason) != (receipt.outcome, receipt.reason):
            logged_as = facts.kind + ("" if facts.reason is None else f" ({facts.reason})")
            yield finding(
                EvidenceCode.RECEIPT_MISMATCH,
                f"{where} {claim}; the log records it as {logged_as}",
                line,
            )
        if facts.t_ms != receipt.t_ms:
            yield finding(
                EvidenceCode.DELAYED,
                f"{where} {claim}; the log records it at {in_ms(facts.t_ms)}",
                line,
            )

    def _refusal(
        self,
        finding: Callable[..., EvidenceFinding],
        where: str,
        claim: str,
        receipt: Receipt,
        facts: Facts,
        line: Entry,
    ) -> Iterator[EvidenceFinding]:
        """A refusal the log itself disproves: its head was not the log's head then, the
        match was not over (or not held at its end), or ``n`` was the seat's next number.
        (Why a statement was refused for its text, its signature or the record it names,
        the log cannot tell without the statement itself.)"""
        later = self.earliest_after.get(receipt.seq)
        # Equal times are no evidence: the table may take a submission and write a record
        # in one millisecond, in either order. (A tournament's final record is never a
        # ``later``: ``ChainScanner._follow``.)
        if later is not None and later.t_ms < receipt.t_ms:
            by = NAMED_BY[receipt.v]
            yield finding(
                EvidenceCode.STALE_HEAD,
                f"{where} {claim}; but the log's seq {later.seq} ({later.kind}) follows it and "
                f"was written at {in_ms(later.t_ms)}, before the refusal: the table named an "
                "old record as its head",
                Entry(
                    file=self.log,
                    line=later.seq + 1,
                    seq=later.seq,
                    record=later.record if by == "line" else later.body,
                    t_ms=later.t_ms,
                    by=by,
                ),
            )
        over = receipt.reason == SubmissionCode.MATCH_OVER and facts.kind != RecordKind.FINAL.value
        # A v2 receipt's table had no FINAL_HELD: holding a tournament's final record, it
        # refused with MATCH_OVER, naming its last hand_end. Such a refusal is held to
        # FINAL_HELD's rule.
        held = over and receipt.v == LINE_RECEIPT_VERSION and self.tournament
        if over and not held:
            yield finding(
                EvidenceCode.REFUSAL_UNFOUNDED,
                f"{where} {claim}; but seq {receipt.seq} is a {facts.kind} record, not the "
                "final one: the match was not over",
                line,
            )
        if receipt.reason == SubmissionCode.FINAL_HELD or held:
            next_kind = self.following.get(receipt.seq)
            if facts.kind != RecordKind.HAND_END.value:
                yield finding(
                    EvidenceCode.REFUSAL_UNFOUNDED,
                    f"{where} {claim}; but seq {receipt.seq} is a {facts.kind} record, not "
                    "the last hand_end: the match was not played out",
                    line,
                )
            elif next_kind is not None and next_kind != RecordKind.FINAL.value:
                yield finding(
                    EvidenceCode.REFUSAL_UNFOUNDED,
                    f"{where} {claim}; but the record after seq {receipt.seq} is a "
                    f"{next_kind} record, not the final one: the match was not played out",
                    line,
                )
        expected = self.next_n.get((receipt.seq, receipt.seat))
        if receipt.reason == SubmissionCode.WRONG_NUMBER and expected == receipt.n:
            yield finding(
                EvidenceCode.REFUSAL_UNFOUNDED,
                f"{where} {claim}; but after seq {receipt.seq} seat {receipt.seat}'s next "
                f"number was {receipt.n}, the one it sent",
                line,
            )

    def _locate(
        self,
        finding: Callable[..., EvidenceFinding],
        where: str,
        claim: str,
        receipt: Receipt,
        forked: bool = False,
    ) -> Iterator[EvidenceFinding]:
        """Where the log holds the submission a logged receipt names, when not where the
        receipt says."""
        facts = self.by_submission.get((receipt.seat, receipt.n))
        subject = f"seat {receipt.seat}'s submission n {receipt.n}"
        if facts is not None and facts.submission == receipt.submission:
            if (facts.line - 1, facts.t_ms) != (receipt.seq, receipt.t_ms):
                entry = self._entry(facts, receipt.v)
                yield finding(
                    EvidenceCode.DELAYED,
                    f"{where} {claim}; the log holds it as seq {facts.line - 1} ({facts.kind}, "
                    f"{entry.by} {short(entry.record)}) at {in_ms(facts.t_ms)}",
                    entry,
                )
            return
        if facts is not None:
            yield finding(
                EvidenceCode.DROPPED,
                f"{where} {claim}; the log's {subject} is another statement "
                f"({short(facts.submission or '')}, seq {facts.line - 1}): this one was "
                "dropped",
                self._entry(facts, receipt.v),
            )
            return
        if self.scan.finished:
            past = "" if forked else f"seq {receipt.seq} is past its end, and "
            yield finding(
                EvidenceCode.DROPPED,
                f"{where} {claim}; {self._end()}: {past}{subject} is not among them",
            )
        elif self.scan.damage is None:
            yield finding(
                EvidenceCode.NOT_YET_LOGGED,
                f"{where} {claim}; {self._end()}, and {subject} is not among them",
            )
        else:
            yield finding(EvidenceCode.UNCHECKED, f"{where} {claim}; {self._end()}")

    def between_receipts(
        self, receipts: Sequence[tuple[str, ReceiptLine]]
    ) -> Iterator[EvidenceFinding]:
        """Two receipts of one version and game (the log's, when it has one) naming one seq
        by different records: each later receipt compared with the first naming that seq.
        Receipts of two versions name records by different hashes: only the log compares
        them."""
        first: dict[tuple[int, str, int], tuple[str, ReceiptLine]] = {}
        for file, item in receipts:
            receipt = item.receipt
            if self.scan.game is not None and receipt.game != self.scan.game:
                continue
            earlier = first.setdefault((receipt.v, receipt.game, receipt.seq), (file, item))
            other_file, other = earlier
            if other.receipt.record == receipt.record:
                continue
            both = (
                f"receipt {place(file, item.line)} names seq {receipt.seq} as "
                f"{_named(receipt)}, receipt {place(other_file, other.line)} as "
                f"{_named(other.receipt)}"
            )
            # A v2 receipt names the whole line; a submission's line never changes once
            # written, and a later record fixes any line. Two refusals may name a last line
            # (the final record) before and after someone changed its signatures.
            settled = (
                receipt.v != LINE_RECEIPT_VERSION
                or receipt.logged
                or other.receipt.logged
                or receipt.seq + 1 < self.scan.records
            )
            yield EvidenceFinding(
                code=EvidenceCode.FORK if settled else EvidenceCode.LAST_LINE_CHANGED,
                file=file,
                line=item.line,
                seat=receipt.seat,
                n=receipt.n,
                said=_said(file, item),
                compared=_said(other_file, other),
                message=f"{both}: the table signed both"
                if settled
                else f"{both}: two v2 refusals, and no record of the log's table-signed chain "
                "follows that seq to fix the line's signatures: no evidence",
            )
