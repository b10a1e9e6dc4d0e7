"""JSON Schema's regular expressions (ECMA-262) rewritten for Python's ``re``.

JSON Schema means a ``pattern`` as an ECMA-262 regular expression with Unicode support
(the ``u`` flag), searched for anywhere in the string. Python's ``re`` reads the same
text differently where a hostile string can show it: ``$`` also matches before a final
newline, so ``"^[0-9a-f]{32}$"`` accepts a game id ending in ``"\\n"``; ``\\d`` and ``\\w``
match any Unicode digit or letter, not ASCII only; ``.`` matches a carriage return.

``translate`` rewrites a pattern into Python syntax with the ECMA-262 meaning. It knows the
constructs JSON Schema advises schema authors to keep to (literals, classes and ranges,
quantifiers, ``^`` and ``$``, groups, alternation) and the escapes of plain meaning
(``\\d \\D \\w \\W``, control characters, ``\\x`` and ``\\u`` codes). Any other construct
is refused with ``PatternError`` rather than passed on with Python's meaning, so a schema
cannot silently be checked in another language than the one it is written in.
"""

from __future__ import annotations

import re
from typing import Final

# ECMA-262's SyntaxCharacter and "/": escaped, each stands for itself.
_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/")
_CONTROL: Final = {"t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_DIGITS: Final = frozenset("0123456789")  # str.isdigit would take any Unicode digit
# Class escapes, ASCII as ECMA-262 defines them: as members of a class, and on their own.
_IN_CLASS: Final = {"d": "0-9", "w": "A-Za-z0-9_"}
_ALONE: Final = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
# ECMA-262's "." is anything but a LineTerminator.
_DOT: Final = "[^\\n\\r\\u2028\\u2029]"


class PatternError(ValueError):
    """A pattern this module does not translate with its ECMA-262 meaning."""


def translate(pattern: str) -> str:
    """``pattern`` (ECMA-262, ``u`` flag) as Python ``re`` syntax with the same meaning
    under ``re.search``."""
    return _Translator(pattern).run()


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled with its ECMA-262 meaning: ``.search`` is JSON Schema's test."""
    translated = translate(pattern)
    try:
        return re.compile(translated)
    except (re.error, OverflowError) as error:  # a repetition count past Python's limit
        raise PatternError(f"{pattern!r}: {error}") from None


def search(pattern: str, text: str) -> bool:
    """Whether ``text`` is valid under ``{"pattern": pattern}``."""
    return compile_pattern(pattern).search(text) is not None


class _Translator:
    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._at = 0
        self._out: list[str] = []
        self._depth = 0
        # Whether the last thing written is an atom a quantifier may follow: not the start,
        # a "(", a "|", an anchor, nor another quantifier (Python would read "a*+" as
        # possessive; ECMA-262 refuses it).
        self._quantifiable = False

    def _refuse(self, what: str) -> PatternError:
        return PatternError(f"{self._pattern!r} at {self._at}: {what}")

    def _peek(self, offset: int = 0) -> str:
        index = self._at + offset
        return self._pattern[index] if index < len(self._pattern) else ""

    def run(self) -> str:
        while self._at < len(self._pattern):
            self._step()
        if self._depth:
            raise self._refuse("an unclosed group")
        return "".join(self._out)

    def _atom(self, text: str, advance: int) -> None:
        self._out.append(text)
        self._at += advance
        self._quantifiable = True

    def _operator(self, text: str, advance: int = 1) -> None:
        self._out.append(text)
        self._at += advance
        self._quantifiable = False

    def _step(self) -> None:
        char = self._peek()
        if char == "^":
            self._operator("\\A")  # the start of the string, whatever flags Python is given
        elif char == "$":
            self._operator("\\Z")  # the end of the string, not before a final newline
        elif char == "|":
            self._operator("|")
        elif char == "(":
            if self._peek(1) == "?":
                if self._peek(2) != ":":
                    raise self._refuse("only plain groups and (?: ) are translated")
                self._operator("(?:", 3)
            else:
                self._operator("(?:", 1)  # nothing reads the capture
            self._depth += 1
        elif char == ")":
            if not self._depth:
                raise self._refuse("a ')' that closes no group")
            self._depth -= 1
            self._atom(")", 1)
        elif char in "*+?{":
            self._quantifier()
        elif char == ".":
            self._atom(_DOT, 1)
        elif char == "[":
            self._class()
        elif char == "\\":
            self._escape_alone()
        elif char in "]}":
            raise self._refuse(f"a lone {char!r}")
        else:
            self._atom(re.escape(char), 1)

    def _quantifier(self) -> None:
        if not self._quantifiable:
            raise self._refuse("a quantifier with nothing to repeat, or after another")
        char = self._peek()
        if char == "{":
            end = self._pattern.find("}", self._at)
            low, comma, high = self._pattern[self._at + 1 : end].partition(",")
            if (
                end < 0
                or not low
                or not set(low) <= _DIGITS
                or not set(high) <= _DIGITS
                or (high and int(high) < int(low))
            ):
                raise self._refuse("a '{' that is not a quantifier {n}, {n,} or {n,m}")
            text = f"{{{int(low)}{comma}{int(high) if high else ''}}}"
            self._at = end + 1
        else:
            text = char
            self._at += 1
        if self._peek() == "?":  # lazy: the same in both
            text += "?"
            self._at += 1
        self._out.append(text)
        self._quantifiable = False

    def _escape_alone(self) -> None:
        letter = self._peek(1)
        if letter in _ALONE:
            self._atom(_ALONE[letter], 2)
        else:
            char, length = self._character_escape(in_class=False)
            self._atom(re.escape(char), length)

    def _character_escape(self, in_class: bool) -> tuple[str, int]:
        """The character the escape at the cursor stands for, and the escape's length."""
        letter = self._peek(1)
        if letter in _SYNTAX or (in_class and letter == "-"):
            return letter, 2
        if letter in _CONTROL:
            return _CONTROL[letter], 2
        if letter == "0" and self._peek(2) not in _DIGITS:
            return "\0", 2
        if letter in ("x", "u"):
            digits = self._pattern[self._at + 2 : self._at + (4 if letter == "x" else 6)]
            if len(digits) != (2 if letter == "x" else 4) or not set(digits) <= _HEX:
                raise self._refuse(f"a malformed \\{letter} escape")
            code = int(digits, 16)
            if 0xD800 <= code <= 0xDFFF:
                # Under the u flag a pair of these is one character: not translated.
                raise self._refuse("a surrogate \\u escape")
            return chr(code), 2 + len(digits)
        if not letter:
            raise self._refuse("a '\\' at the end")
        raise self._refuse(f"the escape \\{letter} is not translated")

    def _class(self) -> None:
        self._at += 1
        negated = self._peek() == "^"
        if negated:
            self._at += 1
        if self._peek() == "]":
            # ECMA-262's [] matches nothing and [^] anything; Python reads "]" as a member.
            raise self._refuse("an empty class")
        members: list[str] = []
        while self._peek() != "]":
            if not self._peek():
                raise self._refuse("an unclosed class")
            member, low = self._class_atom()
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self._at += 1
                high = self._class_atom()[1]
                if low is None or high is None:
                    raise self._refuse("a range with a class escape at one end")
                if ord(high) < ord(low):
                    raise self._refuse("a range out of order")
                member = f"{member}-{re.escape(high)}"
            members.append(member)
        self._atom(f"[{'^' if negated else ''}{''.join(members)}]", 1)

    def _class_atom(self) -> tuple[str, str | None]:
        """The class member at the cursor in Python syntax, and the one character it
        stands for (None for ``\\d`` or ``\\w``)."""
        char = self._peek()
        if char != "\\":
            if char == "[":
                raise self._refuse("a '[' inside a class")  # Python may read a nested set
            self._at += 1
            return re.escape(char), char
        letter = self._peek(1)
        if letter in _IN_CLASS:
            self._at += 2
            return _IN_CLASS[letter], None
        if letter in _ALONE:
            raise self._refuse(f"\\{letter} inside a class is not translated")
        escaped, length = self._character_escape(in_class=True)
        self._at += length
        return re.escape(escaped), escaped
