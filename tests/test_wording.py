"""One way to spell a count and its noun (issue 29: "1 files", "1 findings")."""

from racing_demon.wording import plural


def test_one_is_singular_and_other_counts_are_plural() -> None:
    assert plural(1, "file") == "1 file"
    assert plural(0, "file") == "0 files"
    assert plural(2, "finding") == "2 findings"


def test_an_irregular_plural_is_given() -> None:
    assert plural(1, "copy", "copies") == "1 copy"
    assert plural(4, "copy", "copies") == "4 copies"


def test_large_counts_have_thousands_separators() -> None:
    assert plural(1297, "record") == "1,297 records"
