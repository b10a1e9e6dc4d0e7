"""The reporters of ``racing_demon.keys_run``, chosen by name: keygen's (``text``: the
key id and the two files; ``json``: ``keygen_document``) and seed's (``text``: the secret
or where it was written, and the commitment, or whether a secret opens one; ``json``:
``seed_document`` and ``seed_check_document``). None shows a private key, nor a secret
being checked."""

from __future__ import annotations

import json

from racing_demon.keys_run import KeyPair
from racing_demon.report.base import CommandReporter
from racing_demon.report.batch import Echo, print_echo
from racing_demon.report.documents import keygen_document, seed_check_document
from racing_demon.report.text import seed_document


class TextKeygenReporter(CommandReporter):
    def generated(self, pair: KeyPair) -> None:
        self._out(f"key id   {pair.key_id}")
        self._out(f"private  {pair.private}")
        self._out(f"public   {pair.public}")


class JsonKeygenReporter(CommandReporter):
    def generated(self, pair: KeyPair) -> None:
        document = keygen_document(pair.key_id, pair.private, pair.public, encrypted=pair.encrypted)
        self._out(json.dumps(document, indent=2, ensure_ascii=False))


KEYGEN_REPORTERS: dict[str, type[TextKeygenReporter | JsonKeygenReporter]] = {
    "text": TextKeygenReporter,
    "json": JsonKeygenReporter,
}


def keygen_reporter_named(
    name: str, echo: Echo = print_echo
) -> TextKeygenReporter | JsonKeygenReporter:
    """The keygen reporter called ``name`` (a key of ``KEYGEN_REPORTERS``); KeyError for
    another."""
    return KEYGEN_REPORTERS[name](echo)


class TextSeedReporter(CommandReporter):
    whole_document = False

    def made(self, secret_hex: str, commitment_hex: str) -> None:
        self._out(f"secret      {secret_hex}   keep private until the match ends")
        self._out(f"commitment  {commitment_hex}   publish before players contribute")

    def written(self, out: str, commitment_hex: str) -> None:
        self._out(f"secret      written to {out} (mode 0600)   keep it private until the end")
        self._out(f"commitment  {commitment_hex}   publish before players contribute")

    def checked(self, commitment_hex: str, *, opens: bool) -> None:
        if opens:
            self._out("ok: the secret matches the commitment")
        else:
            self._out("MISMATCH: this secret does not open this commitment")  # a verdict


class JsonSeedReporter(TextSeedReporter):
    """One document; a secret written to a file has none (``run_seed_new`` refuses it)."""

    whole_document = True

    def made(self, secret_hex: str, commitment_hex: str) -> None:
        self._out(json.dumps(seed_document(secret_hex, commitment_hex), indent=2))

    def checked(self, commitment_hex: str, *, opens: bool) -> None:
        self._out(json.dumps(seed_check_document(commitment_hex, opens=opens), indent=2))


SEED_REPORTERS: dict[str, type[TextSeedReporter]] = {
    "text": TextSeedReporter,
    "json": JsonSeedReporter,
}


def seed_reporter_named(name: str, echo: Echo = print_echo) -> TextSeedReporter:
    """The seed reporter called ``name`` (a key of ``SEED_REPORTERS``); KeyError for
    another."""
    return SEED_REPORTERS[name](echo)
