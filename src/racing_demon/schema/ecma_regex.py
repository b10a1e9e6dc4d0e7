"""JSON Schema's regular expressions, matched as JSON Schema means them.

JSON Schema means a ``pattern`` as an ECMA-262 regular expression with Unicode support
(the ``u`` flag), searched for anywhere in the string. Python's ``re`` reads the same text
differently where a hostile string can show it: ``$`` also matches before a final newline,
so ``"^[0-9a-f]{32}$"`` accepts a game id ending in ``"\\n"``; ``\\d`` and ``\\w`` match
any Unicode digit or letter, not ASCII only; ``.`` matches a carriage return. So patterns
are compiled by regress, the ECMA-262 engine that jsonschema's own maintainers publish
for Python, and never by ``re``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

import regress

from racing_demon.errors import RacingDemonError


class PatternError(RacingDemonError, ValueError):
    """A pattern that is not an ECMA-262 regular expression."""


Search = Callable[[str], object]  # a match (truthy) or None


@cache
def compile_pattern(pattern: str) -> Search:
    """``pattern``'s search: truthy where JSON Schema's ``{"pattern": pattern}`` holds.

    A string holding a lone surrogate (which no UTF-8 text has, but a Python ``str`` from
    ``json.loads`` of a ``\\ud800`` escape can) matches no pattern: regress cannot take it,
    and refusing it is the fail-closed answer.
    """
    try:
        find = regress.Regex(pattern, "u").find
    except regress.RegressError as error:
        raise PatternError(f"{pattern!r}: {error}") from None

    def search(text: str) -> object:
        try:
            return find(text)
        except UnicodeEncodeError:
            return None

    return search


def search(pattern: str, text: str) -> bool:
    """Whether ``text`` is valid under ``{"pattern": pattern}``."""
    return compile_pattern(pattern)(text) is not None
