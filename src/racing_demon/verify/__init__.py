"""The verifier: replay a signed log and say whether it holds (docs/log-format.md §7).

Ten numbered steps in one fail-closed order, each failure a stable code, each step a
module of this package:

1. ``step01_framing``, 2. ``step02_canonical``, 3. ``step03_schema``, 4. ``step04_chain``,
5. ``step05_signatures``, 6. ``step06_secret``, 7. ``step07_rules`` (rules and packs),
8. ``step08_replay``, 9. ``step09_scores``, 10. ``step10_final``.

``driver`` streams the file through them; ``report`` holds the verdicts, steps, codes and
findings. ``verify_log`` and ``verify_stream`` return a ``Report``; nothing a log holds
makes them raise.
"""

from racing_demon.verify.driver import unreadable_report, verify_log, verify_stream
from racing_demon.verify.report import Finding, Report, RulesFacts, Step, Verdict, VerifyCode
from racing_demon.verify.settings import Settings, SettingsError

__all__ = [
    "Finding",
    "Report",
    "RulesFacts",
    "Settings",
    "SettingsError",
    "Step",
    "Verdict",
    "VerifyCode",
    "unreadable_report",
    "verify_log",
    "verify_stream",
]
