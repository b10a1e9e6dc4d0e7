"""A sealed line is built around the body bytes the table signed (log/writer.py
``signed_line``), not from a second encoding of the body: the bytes must be the ones
``line_bytes`` writes, and a refusal the one it gives (issue 31's server work: "without
changing any byte the server writes")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from racing_demon.log.canonical import MAX_SAFE_INTEGER, CanonicalError, canonical_bytes
from racing_demon.log.records import line_bytes
from racing_demon.log.writer import signed_line

keys = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=6)
scalars = st.none() | st.booleans() | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER) | st.text()
values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=24,
)
objects = st.dictionaries(keys, values, max_size=6)


@given(objects, objects)
def test_a_line_around_the_signed_body_bytes_is_the_line(
    body: dict[str, Any], sigs: dict[str, Any]
) -> None:
    assert signed_line(body, canonical_bytes(body), sigs) == line_bytes(body, sigs)


@pytest.mark.parametrize("bad", [1.5, "\ud800", 2**60, {1: "x"}])
def test_signatures_outside_the_data_model_are_refused_as_line_bytes_refuses_them(
    bad: object,
) -> None:
    body = {"kind": "move", "seq": 3}
    sigs = {"player": bad, "table": "ab" * 64}
    with pytest.raises(CanonicalError) as expected:
        line_bytes(body, sigs)
    with pytest.raises(CanonicalError) as found:
        signed_line(body, canonical_bytes(body), sigs)
    assert (found.value.code, found.value.path, str(found.value)) == (
        expected.value.code,
        expected.value.path,
        str(expected.value),
    )
