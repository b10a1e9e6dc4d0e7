"""JSON Schema's regular expressions, matched as JSON Schema means them.

JSON Schema means a ``pattern`` as an ECMA-262 regular expression with Unicode support
(the ``u`` flag), searched for anywhere in the string. Python's ``re`` reads the same text
differently where a hostile string can show it: ``$`` also matches before a final newline,
so ``"^[0-9a-f]{32}$"`` accepts a game id ending in ``"\\n"``; ``\\d`` and ``\\w`` match
any Unicode digit or letter, not ASCII only; ``.`` matches a carriage return. So patterns
are compiled by regress, the ECMA-262 engine that jsonschema's own maintainers publish
for Python, and never by ``re`` as they are written.

Where regress has no build (the browser page's Pyodide), a pattern of a small subset, the
one our schemas use, is translated into a ``re`` pattern of the same meaning: anchors,
literal letters, digits, ``_`` and ``-``, bracketed classes of those (ranges, negation),
groups, alternation and quantifiers. ``$`` becomes ``\\Z``, which like ECMA-262's ``$``
matches only at the very end. Any other pattern is refused (``PatternError``), never
guessed at; tests/test_schema_fallback.py compares the two engines on our schemas'
patterns and hostile strings.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Final

try:
    import regress
except ImportError:  # no build of it here (Pyodide): the subset is translated for re
    _REGRESS = False
else:
    _REGRESS = True

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
    find: Search
    if _REGRESS:
        try:
            find = regress.Regex(pattern, "u").find
        except regress.RegressError as error:
            raise PatternError(f"{pattern!r}: {error}") from None
    else:
        find = translated(pattern).search

    def search(text: str) -> object:
        if not _REGRESS and _SURROGATE.search(text):
            return None  # as regress answers, below
        try:
            return find(text)
        except UnicodeEncodeError:
            return None

    return search


def search(pattern: str, text: str) -> bool:
    """Whether ``text`` is valid under ``{"pattern": pattern}``."""
    return compile_pattern(pattern)(text) is not None


_SURROGATE: Final = re.compile("[\\ud800-\\udfff]")
_LITERAL: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# A quantifier, at the start of what is left: ECMA-262 with the u flag refuses a brace
# that starts none, where re would read it as a literal.
_QUANTIFIER: Final = re.compile(r"(?:[*+?]|\{[0-9]+(?:,[0-9]*)?\})\??")
_CLASS: Final = re.compile(r"\[\^?((?:[A-Za-z0-9_]-[A-Za-z0-9_]|[A-Za-z0-9_])+)-?\]")


def translated(pattern: str) -> re.Pattern[str]:
    """``pattern``, of the subset the module's docstring names, as a ``re`` pattern that
    finds exactly what ECMA-262 with the u flag finds; PatternError for any other."""
    parts: list[str] = []
    depth = 0
    at = 0
    quantifiable = False  # whether the last part is an atom a quantifier may follow
    while at < len(pattern):
        char = pattern[at]
        quantifier = _QUANTIFIER.match(pattern, at)
        if quantifier is not None:
            if not quantifiable:
                raise PatternError(f"{pattern!r}: nothing to repeat at {at}")
            parts.append(quantifier.group())
            at = quantifier.end()
            quantifiable = False
            continue
        klass = _CLASS.match(pattern, at) if char == "[" else None
        if klass is not None:
            parts.append(klass.group())
            at, quantifiable = klass.end(), True
            continue
        if char in _LITERAL:
            parts.append(char)
        elif char == "^":
            parts.append("^")
        elif char == "$":
            parts.append(r"\Z")
        elif char == "|":
            parts.append("|")
        elif char == "(" and pattern[at + 1 : at + 2] != "?":
            parts.append("(?:")
            depth += 1
        elif char == ")" and depth > 0 and parts[-1] != "(?:":
            parts.append(")")
            depth -= 1
        else:
            raise PatternError(f"{pattern!r}: {char!r} at {at} is outside the subset translated")
        quantifiable = char not in "^$|("
        at += 1
    if depth:
        raise PatternError(f"{pattern!r}: a group is not closed")
    try:
        return re.compile("".join(parts))
    except re.error as error:  # a range out of order, as ECMA-262 also refuses
        raise PatternError(f"{pattern!r}: {error}") from None
