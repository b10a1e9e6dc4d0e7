"""The evidence is a package with a module per job (issue 30, point 3: "One job per module
… (and any other module over about 600 lines)"): evidence.py was 978 lines.
"""

from __future__ import annotations

from pathlib import Path

import racing_demon.evidence

PACKAGE = Path(racing_demon.evidence.__file__).parent


def test_each_job_has_its_module_and_none_is_long() -> None:
    sizes = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.glob("*.py")
    }
    assert set(sizes) == {"__init__.py", "findings.py", "scan.py", "receipts.py", "copies.py"}
    assert {name: lines for name, lines in sizes.items() if lines > 400} == {}


def test_the_package_still_gives_every_name_its_users_import() -> None:
    assert set(racing_demon.evidence.__all__) == {
        "EVIDENCE",
        "INVALID_SHOWN",
        "NAMED_BY",
        "RECEIPT_GUARANTEES",
        "Entry",
        "EvidenceCode",
        "EvidenceFinding",
        "EvidenceGathering",
        "EvidenceReport",
        "LogScan",
        "gather_evidence",
        "start_evidence",
    }
    assert all(hasattr(racing_demon.evidence, name) for name in racing_demon.evidence.__all__)
