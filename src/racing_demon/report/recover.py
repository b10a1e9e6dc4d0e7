"""The reporters of ``racing_demon.recover_run.run_recover``, chosen by name: ``text``
says what was done (or, with a dry run, would be) and why, with the verification's report
when the records before the end do not make an unfinished log; ``json`` prints one
document (``recover_document``, schemas/recover-report.schema.json)."""

from __future__ import annotations

import json

from racing_demon.printing import printable
from racing_demon.recover import Action, Recovery
from racing_demon.report.base import CommandReporter
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.documents import recover_document
from racing_demon.report.verify import report_text
from racing_demon.report_document import report_document
from racing_demon.verify import Verdict
from racing_demon.wording import plural


class TextRecoverReporter(CommandReporter):
    def recovered(self, recovery: Recovery, *, signatures_checked: bool) -> None:
        report, dry_run = recovery.report, recovery.dry_run
        records = report.records
        kept = "no complete record" if not records else plural(records, "complete record")
        unchecked = "" if signatures_checked else " (signatures not checked: no --table-key)"
        shown = printable(recovery.source)
        if recovery.action is Action.REMOVED_TORN_LINE and not recovery.kept_bytes:
            verb = "would cut" if dry_run else "cut"
            self._out(
                f"{shown}: {verb} its only line, {plural(recovery.torn_bytes, 'byte')} of a torn "
                f"genesis (--allow-empty): the file {'would be' if dry_run else 'is'} empty"
            )
        elif recovery.action is Action.REMOVED_TORN_LINE:
            verb = "would remove" if dry_run else "removed"
            self._out(
                f"{shown}: {verb} a torn last line of {plural(recovery.torn_bytes, 'byte')}; "
                f"kept {kept} ({plural(recovery.kept_bytes, 'byte')}), an unfinished "
                f"log{unchecked}"
            )
        elif recovery.action is Action.RESTORED_NEWLINE:
            verb = "would restore" if dry_run else "restored"
            self._out(
                f"{shown}: {verb} the newline after the last record, which had lost only "
                f"that: it is a complete record and was kept; {kept}, {report.verdict}{unchecked}"
            )
        elif recovery.action is Action.NOTHING_TO_DO and not recovery.kept_bytes:
            self._out(f"{shown}: the file is empty: nothing to recover")
        elif recovery.action is Action.REFUSED_ONLY_LINE:
            them = "it" if recovery.torn_bytes == 1 else "them"
            self._out(
                f"{shown}: refused, nothing changed: its only line is torn, "
                f"{plural(recovery.torn_bytes, 'byte')} of a first record (the genesis) a crash "
                f"cut short; cutting {them} would leave the file empty, and what the table "
                f"began to write (the seats, keys and rules) lost: give --allow-empty to cut "
                f"{them}"
            )
        elif recovery.action is Action.NOTHING_TO_DO:
            self._out(
                f"{shown}: nothing to recover: it ends with a complete record; "
                f"{kept}, {report.verdict}{unchecked}"
            )
        elif recovery.action is Action.REFUSED_FINAL:
            self._out(
                f"{shown}: refused, nothing changed: its last line, "
                f"{plural(recovery.torn_bytes, 'byte')}, is a damaged final record, the one "
                "that reveals the secret and the scores: keep the file as evidence and find an "
                "intact copy"
            )
        elif report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED):
            # The records before the tail make a whole match: a table writes nothing after
            # its final record, so the tail is no crash's debris.
            self._out(
                f"{shown}: refused, nothing changed: the log ends with its final record "
                f"(line {report.records}), and what follows it "
                f"({plural(recovery.torn_bytes, 'byte')}) is no torn record (a table writes "
                "nothing after its final record): keep the file as evidence"
            )
            self._out(report_text(report))
        else:
            self._out(f"{shown}: refused, nothing changed: the log does not verify")
            self._out(report_text(report))


class JsonRecoverReporter(CommandReporter):
    def recovered(self, recovery: Recovery, *, signatures_checked: bool) -> None:
        document = recover_document(
            recovery, report_document(recovery.report), signatures_checked=signatures_checked
        )
        self._out(json.dumps(document, indent=2, ensure_ascii=False))


RECOVER_REPORTERS: dict[str, type[TextRecoverReporter | JsonRecoverReporter]] = {
    "text": TextRecoverReporter,
    "json": JsonRecoverReporter,
}


def recover_reporter_named(
    name: str, echo: Echo = print_echo
) -> TextRecoverReporter | JsonRecoverReporter:
    """The recover reporter called ``name`` (a key of ``RECOVER_REPORTERS``); KeyError for
    another."""
    return RECOVER_REPORTERS[name](echo)
