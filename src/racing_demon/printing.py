"""Terminal-safe printing of hostile strings: an edge module every layer may import.

A log's names, moves and messages, a file's name and a finding's quote come from whoever
wrote the file; printed as they are, a control character could move the cursor, clear
the screen or forge a line of a report. Whatever prints such a string shows it through
``printable`` first.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """Text from a log, safe on a terminal: control characters shown escaped, so a name
    cannot move the cursor, clear the screen or forge a line. A byte of a file name that
    is not UTF-8 (Python holds it as a lone surrogate, U+DC80 to U+DCFF) is shown
    ``\\xHH``, as ``files.shown_name`` writes it in JSON: one spelling everywhere."""
    return "".join(
        char
        if char.isprintable()
        else f"\\x{ord(char) - 0xDC00:02x}"
        if 0xDC80 <= ord(char) <= 0xDCFF
        else char.encode("unicode_escape").decode("ascii")
        for char in text
    )
