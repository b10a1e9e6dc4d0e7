"""A batch summed up as it streams: how many logs got each verdict, and why."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from racing_demon.outcomes import ExitCode, batch_exit_code, exit_code_of
from racing_demon.verify import Report, Verdict


@dataclass(frozen=True)
class Summary:
    """How many logs got each verdict and, for those with a finding, why.

    ``reasons`` maps a verdict to counts of its finding codes; for UNREADABLE, whose code
    is always UNREADABLE, to the system's words instead (``No such file or directory``,
    ``no logs found``). ``exit_code`` combines the logs' as ``batch_exit_code`` does.
    """

    counts: Mapping[Verdict, int]
    reasons: Mapping[Verdict, Mapping[str, int]]
    exit_code: ExitCode

    @classmethod
    def of(cls, reports: Iterable[Report]) -> Summary:
        summary = cls({verdict: 0 for verdict in Verdict}, {}, ExitCode.OK)
        for report in reports:
            summary = summary.plus(report)
        return summary

    def plus(self, report: Report) -> Summary:
        """This summary and one more report: a batch is summed up as it streams, without
        keeping its reports."""
        counts = {**self.counts, report.verdict: self.counts[report.verdict] + 1}
        reasons = {verdict: dict(why) for verdict, why in self.reasons.items()}
        if report.finding is not None:
            why = reasons.setdefault(report.verdict, {})
            reason = _reason(report)
            why[reason] = why.get(reason, 0) + 1
        return Summary(counts, reasons, batch_exit_code((self.exit_code, exit_code_of(report))))

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def _reason(report: Report) -> str:
    """An unreadable log's message without its name, which every log's differs by."""
    assert report.finding is not None
    if report.verdict is Verdict.UNREADABLE:
        message = report.finding.message.removeprefix(f"cannot read {report.source}: ")
        return message.removesuffix(f" under {report.source}")
    return str(report.finding.code)
