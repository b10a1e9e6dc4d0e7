"""Step 10, final record: the final record comes after the last hand's end, where the
profile's match rule ends the match, and gives the reason the last hand ended it for
(complete, resigned or abandoned). The match flow checks it as it replays the final record
(step 8); these are the codes it reports under this step."""

from __future__ import annotations

from typing import Final

from racing_demon.game.flow import FlowCode

# Annotated: mypyc checks the verify package's import cycle in an order that cannot infer it.
FLOW_CODES: Final[frozenset[FlowCode]] = frozenset(
    {FlowCode.HAND_NOT_ENDED, FlowCode.MATCH_NOT_OVER, FlowCode.FINAL_MISMATCH}
)
