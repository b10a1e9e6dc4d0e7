"""What a second implementation needs about rules digests, from the docs alone (issue 29,
"Docs a second implementation needed"): the exact escaping of ``Rules.digest()``, the
built-in profiles' documents and digests, and the profile checks beyond the schema."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest

from racing_demon.profiles import BUILT_IN, ProfileError, builtin_digest, load_rules
from racing_demon.profiles import rules_from_document as from_document

from conftest import invoke, load_script

ROOT = Path(__file__).resolve().parents[1]
LOG_FORMAT = (ROOT / "docs" / "log-format.md").read_text(encoding="utf-8")
RULES_DOC = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
SHORT = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}


def _string_as_the_doc_says(text: str) -> str:
    """A string written as docs/log-format.md §7 ("The rules") words it, from the doc alone."""
    out = []
    for char in text:
        if char in SHORT:
            out.append(SHORT[char])
        elif " " <= char <= "~":
            out.append(char)
        elif ord(char) > 0xFFFF:
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return '"' + "".join(out) + '"'


def _as_the_doc_says(value: object) -> str:
    if isinstance(value, dict):
        pairs = [f"{_as_the_doc_says(k)}:{_as_the_doc_says(v)}" for k, v in sorted(value.items())]
        return "{" + ",".join(pairs) + "}"
    if isinstance(value, str):
        return _string_as_the_doc_says(value)
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    assert isinstance(value, int)
    return str(value)


def test_the_digest_escapes_exactly_what_the_doc_says() -> None:
    """Issue 29: "§7 Rules.digest() escapes DEL (0x7F) as well as non-ASCII — say exactly
    which characters are escaped"; checked for DEL, non-ASCII, controls and the rest."""
    rules_part = LOG_FORMAT.split("### The rules:", 1)[1].split("- **Reserved names.**", 1)[0]
    prose = " ".join(rules_part.split())
    for said in (
        "DEL (U+007F)",
        "every non-ASCII character",
        "every other character outside U+0020\u2013U+007E",
        "U+0008, U+0009, U+000A, U+000C and U+000D are `\\b`, `\\t`, `\\n`, `\\f` and `\\r`",
        "lowercase hex digits",
        "UTF-16 surrogate pair",
    ):
        assert said in prose, said
    title = 'del\x7f é ß € 😀 nul\x00 bel\x07 tab\t nl\n cr\r ff\f bs\b us\x1f q" b\\ /~ \x80\u2028'
    for text in (title, "plain", "\x7f", "é", "😀", "\x1f", "\x00"):
        rules = dataclasses.replace(load_rules("table"), title=text)
        mine = _as_the_doc_says(rules.to_document()).encode("ascii")
        assert hashlib.sha256(mine).hexdigest() == rules.digest(), repr(text)
    assert "\\u007f" in _string_as_the_doc_says("\x7f")  # DEL is escaped, lowercase


def test_the_appendix_holds_every_built_in_profile_as_generated() -> None:
    """Issue 29: "the built-in profiles' documents and digests are in no doc (ship them: an
    appendix generated from the profiles by a script, checked by --check in CI)"."""
    regen = load_script("regen_profiles_doc")
    page = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8")
    assert page == regen.render()
    assert regen.main(["--check"]) == 0
    assert "python scripts/regen_profiles_doc.py --check" in (ROOT / ".ci" / "run").read_text()
    for name in BUILT_IN:
        section = page.split(f"\n## {name}\n", 1)[1].split("\n## ", 1)[0]
        document = re.search(r"```json\n(.*?)\n```", section, flags=re.DOTALL)
        hashed = re.search(r"```\n(\{.*?)\n```", section, flags=re.DOTALL)
        assert document is not None and hashed is not None
        assert invoke("rules", name) == (0, document.group(1) + "\n")
        digest = hashlib.sha256(hashed.group(1).encode("ascii")).hexdigest()
        assert digest == builtin_digest(name)
        assert f"`Rules.digest()`: `{digest}`" in section
        assert f"| `{name}` | 2 | `{digest}` |" in page
        assert _as_the_doc_says(json.loads(document.group(1))) == hashed.group(1)
    code, out = invoke("docs", "profiles")
    assert code == 0 and builtin_digest("nertz") in out


def test_the_regen_check_fails_on_a_stale_appendix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    regen = load_script("regen_profiles_doc")
    stale = tmp_path / "profiles.md"
    stale.write_text("# Appendix\n", encoding="utf-8")
    monkeypatch.setattr(regen, "PAGE", stale)
    assert regen.main(["--check"]) == 1
    assert capsys.readouterr().err == "stale profiles.md: run scripts/regen_profiles_doc.py\n"
    assert regen.main([]) == 0 and regen.main(["--check"]) == 0


def test_the_checks_beyond_the_schema_are_as_docs_rules_defines_them() -> None:
    """Issue 29: "BAD_RULES' 'a target no score can reach' is undefined, and players.min >
    players.max is mentioned nowhere": docs/rules.md defines both, and the refusals are
    exactly those."""
    prose = " ".join(RULES_DOC.split())
    assert (
        "Exactly: a document with `scoring.per_foundation_card` 0 and `match.max_hands` null."
        in prose
    )
    assert "`players.min` above `players.max` (`$.players: min 5 is above max 4`" in prose
    document = load_rules("nertz").to_document()

    def refused(change: dict[str, dict[str, object]]) -> str | None:
        changed = json.loads(json.dumps(document))
        for part, fields in change.items():
            changed[part].update(fields)
        try:
            from_document(changed)
        except ProfileError as error:
            return str(error)
        return None

    assert "$.players: min 5 is above max 4" in (refused({"players": {"min": 5, "max": 4}}) or "")
    assert refused({"players": {"min": 4, "max": 4}}) is None  # equal bounds are allowed
    unreachable = refused({"scoring": {"per_foundation_card": 0}})
    assert unreachable is not None
    assert "$.match: target 100 cannot be reached when a card in the centre scores 0" in (
        unreachable
    )
    assert refused({"scoring": {"per_foundation_card": 0}, "match": {"max_hands": 3}}) is None
    assert refused({"match": {"target": 100_000}}) is None  # reachable in enough hands
