"""What a table tells its host of each line it writes (``Table.create``'s ``on_line`` and
``on_record``): a server journals the line, and shows the table after its record."""

from __future__ import annotations

from collections.abc import Callable

from racing_demon.game.state import State

# The line and the match's position after its record (None before the first deal).
OnRecord = Callable[[bytes, State | None], None]


class LineHook:
    """The log writer's ``on_append``: ``on_line(line)``, then ``on_record(line, position)``.
    ``position`` is set once the table exists: its genesis is written before."""

    def __init__(self, on_line: Callable[[bytes], None] | None, on_record: OnRecord | None):
        self._on_line, self._on_record = on_line, on_record
        self.position: Callable[[], State | None] = lambda: None

    def __call__(self, line: bytes) -> None:
        if self._on_line is not None:
            self._on_line(line)
        if self._on_record is not None:
            self._on_record(line, self.position())
