"""The one base of every error the package raises on purpose."""


class RacingDemonError(Exception):
    """A refusal or failure of racing-demon, with a message that says what and where.

    Everything the package refuses (a log, a file, a key, a profile, a submission, a match
    a table cannot start, contradictory settings) raises a subclass, which also derives from
    the built-in exception a caller would expect (``ValueError`` for a bad value, ``OSError``
    for a file), so that either catches it. A value's constructor (a card, a move, a seed)
    raises a plain ``ValueError`` for an argument outside its domain, as the standard
    library does.
    """
