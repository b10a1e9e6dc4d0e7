"""Step 9, scores: every ``hand_end`` scores its hand as the profile's scoring rule does
(``racing_demon.game.scoring``), and the final record's hand scores, totals and winners are
those of the hands. The match flow recomputes them as it replays (step 8); these are the
codes it reports under this step."""

from __future__ import annotations

from typing import Final

from racing_demon.game.flow import FlowCode

# Annotated: mypyc checks the verify package's import cycle in an order that cannot infer it.
FLOW_CODES: Final[frozenset[FlowCode]] = frozenset(
    {FlowCode.SCORE_MISMATCH, FlowCode.WINNERS_MISMATCH}
)
