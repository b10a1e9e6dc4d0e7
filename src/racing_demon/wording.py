"""Words that every message of the package spells the same way."""


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` and the noun agreeing with it: ``plural(1, "file")`` is ``"1 file"``,
    ``plural(2, "file")`` is ``"2 files"``, ``plural(3, "copy", "copies")`` is
    ``"3 copies"``. Counts are written with thousands separators, as reports write them."""
    noun = singular if count == 1 else (plural_form or singular + "s")
    return f"{count:,} {noun}"
