"""Test harness, never shipped: ``racing-demon serve`` whose tables rule ONE legal move as
bounced (issue 34, point 4: "a server that rules one bounce wrongly mid-game").

Run as a script in place of ``python -m racing_demon`` (``Server(program=BOUNCING)``); as a
script only, never on import, it wraps ``MatchFlow.submit``, the one place a table judges
a submission, so that seat ``SEAT``'s ``NTH`` move (a stock turn or a card move), legal and
accepted by the rules, is recorded instead as a bounce, ``HAND_OVER`` (an end of the hand
that never happened). The table writes, signs and sends that record as it does any
refusal, and plays on from the position the bounce leaves: the log is the table's own,
consistent but for that one ruling, and ``racing-demon verify`` finds it
(``WRONGLY_BOUNCED``, step 8).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

from racing_demon.game.flow import MatchFlow, RecordKind, Submission

SEAT = 1  # a bot's seat in the tests: it plays its cards by itself
# Its first move of the hand, whatever it is: every deal has one at once. (A card to a
# foundation did not come in some deals: the bot, beside an idle person, turned its stock
# through three passes without a card to play, then waited; the table stood still.)
NTH = 1
REASON = "HAND_OVER"

_honest_submit = MatchFlow.submit
_seen = 0


def _submit_wrongly(self: MatchFlow, seat: int, *args: Any, **kwargs: Any) -> Any:
    global _seen
    event, after = _honest_submit(self, seat, *args, **kwargs)
    assert isinstance(event, Submission)
    if seat != SEAT or event.kind is not RecordKind.MOVE:
        return event, after
    _seen += 1
    if _seen != NTH:
        return event, after
    bounced = dataclasses.replace(event, kind=RecordKind.BOUNCE, reason=REASON)
    assert self.state is not None
    return bounced, self._after(self.state)  # the card stays where it was, as for a bounce


if __name__ == "__main__":
    # Only in the server's own process: the tests import SEAT, NTH and REASON from here,
    # and a patch made at import would make every later table of the test process bounce
    # a legal move (it did: a simulated game in the browser tests stopped verifying).
    MatchFlow.submit = _submit_wrongly  # type: ignore[method-assign]

    from racing_demon.cli import main

    sys.exit(main(prog_name="racing-demon"))
