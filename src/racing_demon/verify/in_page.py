"""The verifier's entry for the browser page: one log's bytes in, its report's JSON out.

The page runs this very package in Pyodide (CPython on WebAssembly), where orjson,
jsonschema, jsonschema-rs, regress, PyNaCl and cryptography have no build: every module
``judge`` loads falls back to the standard library where they are missing, with the same
verdicts (tests/test_without_fast_libraries.py). The page's own script checks every
Ed25519 group equation with Web Crypto, so ``judge`` leaves them to it
(``Equations.BY_HOST``) and runs every other check of the ten steps, as ``verify``
without ``--fast`` does; its report says so in a member of its own, ``"equations":
"by_host"``, so that it is never taken for the command's verdict. No file, no network,
no clock: the bytes and the settings are all it reads.
"""

from __future__ import annotations

import dataclasses
import io
import json
import re
from collections.abc import Iterable, Mapping
from typing import Final

from racing_demon.log.reader import Limits
from racing_demon.report_document import report_document
from racing_demon.verify.driver import verify_stream
from racing_demon.verify.settings import Equations, FailedEquation, Settings, SettingsError

_HEX_32: Final = re.compile(r"[0-9a-f]{64}")
_HEX: Final = re.compile(r"[0-9a-f]*")


def judge(
    data: bytes,
    *,
    table_key: str | None,
    rules: str | None,
    unsafe_unpinned: bool,
    source: str = "<stream>",
    secret: str | None = None,
    limits: Mapping[str, int] | None = None,
    failed_equations: Iterable[Mapping[str, str]] = (),
) -> str:
    """The report on the log ``data``, as ``racing-demon verify --json`` writes a log's
    report (its ``reports`` member's item: the same members, the same values, the same
    ``json.dumps(..., indent=2)``), plus ``"equations": "by_host"``: every check but the
    signatures' group equations, which the calling host checks itself.

    ``table_key`` is the pinned table's raw public key as 64 lowercase hex (as the viewer's
    data holds it), ``rules`` the pinned rules' digest; ``unsafe_unpinned`` and ``source``
    as for ``verify``; ``secret`` the dealer secret as 64 lowercase hex, as ``verify
    --secret`` takes it: the log must reveal that secret, and an unfinished log is replayed
    with it (the play page judges its copy before the final record exists); ``limits`` the
    reader's limits by ``Limits``'s field names, as ``verify --max-...`` sets them (the
    defaults where None or left out); ``failed_equations`` the signatures whose group
    equation the host found not to hold, each ``{"key", "signature", "message_sha256"}`` in
    lowercase hex (32, 64 and 32 bytes): each fails where ``verify`` checks it, so the
    report's first failure is ``verify``'s whenever the host named every equation that
    fails. ``SettingsError`` for settings that cannot be used; nothing the log holds makes
    it raise.
    """
    if table_key is not None and not _HEX_32.fullmatch(table_key):
        raise SettingsError("table key: 64 lowercase hex characters (the raw public key)")
    if secret is not None and not _HEX_32.fullmatch(secret):
        raise SettingsError("dealer secret: 64 lowercase hex characters")
    settings = Settings(
        limits=_limits(limits or {}),
        table_key=None if table_key is None else bytes.fromhex(table_key),
        rules=rules,
        unsafe_unpinned=unsafe_unpinned,
        equations=Equations.BY_HOST,
        failed_equations=frozenset(_failed(item) for item in failed_equations),
        seed=None if secret is None else bytes.fromhex(secret),
    )
    report = verify_stream(io.BytesIO(data), settings, source)
    document = {**report_document(report), "equations": settings.equations.value}
    return json.dumps(document, indent=2)


def _failed(item: Mapping[str, str]) -> FailedEquation:
    sizes = {"key": 32, "signature": 64, "message_sha256": 32}
    if set(item) != set(sizes):
        raise SettingsError(f"a failed equation has the members {', '.join(sizes)}")
    values = []
    for name, size in sizes.items():
        text = item[name]
        if not (isinstance(text, str) and _HEX.fullmatch(text) and len(text) == 2 * size):
            raise SettingsError(f"a failed equation's {name}: {2 * size} lowercase hex characters")
        values.append(bytes.fromhex(text))
    return FailedEquation(*values)


def _limits(given: Mapping[str, int]) -> Limits:
    names = {field.name for field in dataclasses.fields(Limits)}
    unknown = sorted(set(given) - names)
    if unknown:
        raise SettingsError(f"limits: no limit is named {', '.join(unknown)}")
    try:
        return Limits(**{name: int(value) for name, value in given.items()})
    except (TypeError, ValueError) as error:
        raise SettingsError(f"limits: {error}") from error
