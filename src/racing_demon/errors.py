"""The one base of every error the package raises on purpose."""


class RacingDemonError(Exception):
    """A refusal or failure of racing-demon, with a message that says what and where.

    Each subclass also derives from the built-in exception a caller would expect (a
    ``ValueError`` for a bad value, an ``OSError`` for a file), so both catch it.
    """
