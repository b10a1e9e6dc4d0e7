"""The reporters of ``racing_demon.deal_run.run_deal``, chosen by name: ``text`` lays out
every seat (``deal_text``), ``json`` prints one document (``deal_document``,
schemas/deal-report.schema.json). Either names the commitment of a secret's deal, never
the secret."""

from __future__ import annotations

import json

from racing_demon.deal_run import Dealt
from racing_demon.report.base import CommandReporter
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.text import deal_document, deal_source, deal_text


class TextDealReporter(CommandReporter):
    def dealt(self, dealt: Dealt) -> None:
        source = deal_source(seed=dealt.seed, commitment=dealt.commitment, game=dealt.game)
        self._out(deal_text(dealt.state, source, dealt.packs))


class JsonDealReporter(CommandReporter):
    def dealt(self, dealt: Dealt) -> None:
        document = deal_document(
            dealt.state,
            dealt.packs,
            seed=dealt.seed,
            commitment=dealt.commitment,
            game=dealt.game,
        )
        self._out(json.dumps(document, indent=2, ensure_ascii=False))


DEAL_REPORTERS: dict[str, type[TextDealReporter | JsonDealReporter]] = {
    "text": TextDealReporter,
    "json": JsonDealReporter,
}


def deal_reporter_named(name: str, echo: Echo = print_echo) -> TextDealReporter | JsonDealReporter:
    """The deal reporter called ``name`` (a key of ``DEAL_REPORTERS``); KeyError for another."""
    return DEAL_REPORTERS[name](echo)
