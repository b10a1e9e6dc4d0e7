"""The wrongly-ruling server harness (tests/serve/bouncing_serve.py) rules wrongly in the
server process it runs as, and nowhere else."""

from __future__ import annotations

from racing_demon.game.flow import MatchFlow

from . import bouncing_serve


def test_importing_the_harness_leaves_the_rules_alone() -> None:
    """The tests import SEAT, NTH and REASON from the harness. Patched at import, every
    later table of the test process bounced a legal move: a simulated game in the browser
    tests stopped verifying (WRONGLY_BOUNCED) once the play page's tests had run."""
    assert MatchFlow.submit is bouncing_serve._honest_submit
