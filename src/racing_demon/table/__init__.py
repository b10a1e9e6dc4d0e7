"""The live table a game server embeds: submissions in, signed records out.

The table deals every hand from the committed seed, takes submissions
``(seat, move, t_ms)`` in arrival order, checks each with the engine, records it as
accepted or bounced, applies the profile's stall, time and end rules, scores hands and
the match, and appends a signed record for each event (docs/log-format.md §6). Every
record is flushed and fsynced before ``submit`` returns, so after a crash the file holds
a prefix of complete records (``durable=False`` skips the fsync, for simulations only).
Every submission is answered at once with a table-signed receipt (§9): the record it
became, or why it was refused; the player's client keeps it as evidence
(``log.receipt_files.ReceiptFiles`` keeps each seat's in the file ``audit --receipts`` reads).

A table of a duplicate tournament (docs/tournament.md) deals the plan's packs, and holds
its final record, which reveals the organiser's secret, until ``reveal``: every table's
packs come from that one secret, so no table may reveal it while another still plays.

A server (``racing_demon.serve.host``) creates its tables with ``on_line``, which sees every
line as it is written and journals it (the journal's sync is then the durable point), and
``hold_final``: the final record is held like a tournament's, its body (``final_body``)
sent to the seats, and their acceptances gathered before ``reveal`` writes it; its timers
sleep until ``deadline``. Before the table exists, ``Table.genesis_body`` is what the seats
co-sign.
"""

from racing_demon.log.receipts import SubmissionCode
from racing_demon.table.errors import (
    ResumeError,
    RevealError,
    SubmissionError,
    TableCode,
    TableError,
)
from racing_demon.table.live import Table
from racing_demon.table.players import PlayerInfo, PlayerSigner, player_signer, sign_submission
from racing_demon.table.submissions import Outcome

__all__ = [
    "Outcome",
    "PlayerInfo",
    "PlayerSigner",
    "ResumeError",
    "RevealError",
    "SubmissionCode",
    "SubmissionError",
    "Table",
    "TableCode",
    "TableError",
    "player_signer",
    "sign_submission",
]
