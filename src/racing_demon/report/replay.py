"""The reporters of ``racing_demon.replay_run.run_replay``, chosen by name: ``text``
shows the table (or the genesis) and what followed it, ``json`` one document
(``replay_document``, schemas/replay-report.schema.json) of a dealt table."""

from __future__ import annotations

import json

from racing_demon.log.records import Record
from racing_demon.replay_run import Replayed
from racing_demon.report.base import CommandReporter
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.documents import replay_document
from racing_demon.report.text import genesis_text, next_text, table_text


class TextReplayReporter(CommandReporter):
    """The table, or the genesis before any was dealt, then the record that followed."""

    shows_genesis = True

    def genesis(self, record: Record) -> None:
        self._out(genesis_text(record))

    def replayed(self, replayed: Replayed) -> None:
        record, names = replayed.record, replayed.names
        if replayed.state is None:  # the genesis, and nothing dealt yet
            self._out(genesis_text(record))
        else:
            self._out(table_text(replayed.state, names, record, replayed.lost_to))
        self._out(next_text(replayed.following, names, record, replayed.following_lost_to))


class JsonReplayReporter(TextReplayReporter):
    """``replay --json``: one document, of a dealt table only (``run_replay`` shows it no
    genesis)."""

    shows_genesis = False

    def replayed(self, replayed: Replayed) -> None:
        assert replayed.state is not None  # run_replay shows JSON a dealt table only
        document = replay_document(
            replayed.source, replayed.state, replayed.names, replayed.record, replayed.following
        )
        self._out(json.dumps(document, indent=2, ensure_ascii=False))


REPLAY_REPORTERS: dict[str, type[TextReplayReporter]] = {
    "text": TextReplayReporter,
    "json": JsonReplayReporter,
}


def replay_reporter_named(name: str, echo: Echo = print_echo) -> TextReplayReporter:
    """The replay reporter called ``name`` (a key of ``REPLAY_REPORTERS``); KeyError for
    another."""
    return REPLAY_REPORTERS[name](echo)
