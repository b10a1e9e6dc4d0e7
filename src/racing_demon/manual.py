"""The documentation shipped inside the package, which ``racing-demon docs`` prints.

An installed wheel has no ``docs/`` folder beside it, so a ``--help`` that named
``docs/log-format.md`` would send the user to a file they do not have. The package holds
the guides (``racing_demon/docs/``: copies of the repository's README.md and docs/*.md,
kept identical by ``scripts/regen_package_docs.py``, which a test and .ci/run check) and
its JSON Schemas (``racing_demon/schemas/``), and the help names them as
``racing-demon docs TOPIC [SECTION]``.

A guide's topic is its file name without ``.md`` (``log-format``; the README is
``readme``), a schema's is its file name (``receipt.schema.json``). The paths the docs
use for each other (``docs/log-format.md``, ``schemas/receipt.schema.json``) name the
same topics, so a reference read in one guide can be typed as it is.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

from racing_demon.errors import RacingDemonError

README = "readme"
_GUIDES = "docs"
_SCHEMAS = "schemas"
_SCHEMA_SUFFIX = ".schema.json"
# The README's own heading is only the project's name: the listing says what it holds.
_README_TITLE = "The overview: what it is, the commands, the library in one screen"
_HEADING = re.compile(r"(#{1,6}) +(.+?) *#* *$")
_NUMBERED = re.compile(r"(\d+)\. +(.*)")
_FENCE = re.compile(r"(```|~~~)")


class TopicError(RacingDemonError, LookupError):
    """A topic or section that the shipped documentation does not hold."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Topic:
    """One guide or schema shipped with the package."""

    name: str  # what ``racing-demon docs`` takes: ``log-format``, ``receipt.schema.json``
    title: str  # a guide's first heading, a schema's ``title``
    schema: bool
    _file: Traversable

    def text(self) -> str:
        return self._file.read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True, kw_only=True)
class Section:
    """A heading of a guide and the lines under it, down to the next heading of its level
    or above."""

    level: int  # 1 for ``#``, 2 for ``##``
    title: str
    text: str


def topics() -> tuple[Topic, ...]:
    """Every topic: the README, the guides in name order, then the schemas."""
    package = resources.files("racing_demon")
    guides = sorted(
        (file for file in package.joinpath(_GUIDES).iterdir() if file.name.endswith(".md")),
        key=lambda file: (file.name != "README.md", file.name),
    )
    schemas = sorted(
        (f for f in package.joinpath(_SCHEMAS).iterdir() if f.name.endswith(_SCHEMA_SUFFIX)),
        key=lambda file: file.name,
    )
    return (
        *(_guide(file) for file in guides),
        *(_schema(file) for file in schemas),
    )


def find(name: str) -> Topic:
    """The topic ``name`` names, also as a path the docs use for it; TopicError, with the
    closest names, if none."""
    wanted = _topic_name(name)
    known = topics()
    for topic in known:
        if topic.name == wanted:
            return topic
    close = difflib.get_close_matches(wanted, [topic.name for topic in known], n=3)
    hint = f": did you mean {' or '.join(close)}?" if close else ""
    raise TopicError(f"no topic {name!r}{hint} ('racing-demon docs' lists them)")


def sections(text: str) -> list[Section]:
    """Every heading of a guide's Markdown, in order, with its text; lines in fenced code
    (a shell comment, a Python one) are not headings."""
    lines = text.splitlines(keepends=True)
    headings: list[tuple[int, int, str]] = []  # line index, level, title
    fenced = False
    for index, line in enumerate(lines):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.fullmatch(line.rstrip("\n"))
        if match is not None:
            headings.append((index, len(match.group(1)), match.group(2)))
    found = []
    for number, (start, level, title) in enumerate(headings):
        end = next(
            (later for later, deeper, _ in headings[number + 1 :] if deeper <= level),
            len(lines),
        )
        found.append(Section(level=level, title=title, text="".join(lines[start:end])))
    return found


def section(topic: Topic, wanted: str) -> Section:
    """The section of ``topic`` that ``wanted`` names: its number (``7`` or ``§7`` for
    "7. Verification") or its title, with or without the number, in any case."""
    if topic.schema:
        raise TopicError(f"{topic.name} is a schema: it has no sections")
    key = _title_key(wanted.removeprefix("§"))
    found = [part for part in sections(topic.text()) if key in _section_keys(part.title)]
    if len(found) == 1:
        return found[0]
    listed = "\n".join(
        "  " * (part.level - 1) + part.title for part in sections(topic.text()) if part.level > 1
    )
    why = "names several sections" if found else "names no section"
    raise TopicError(f"{wanted!r} {why} of {topic.name}; its sections:\n{listed}")


def section_number(title: str) -> str | None:
    """``7`` for the heading "7. Verification"; None for a heading with no number."""
    numbered = _NUMBERED.fullmatch(title)
    return None if numbered is None else numbered.group(1)


def _guide(file: Traversable) -> Topic:
    if file.name == "README.md":
        return Topic(name=README, title=_README_TITLE, schema=False, _file=file)
    name = file.name.removesuffix(".md")
    first = next(iter(sections(file.read_text(encoding="utf-8"))), None)
    return Topic(
        name=name,
        title=name if first is None else first.title.replace("`", ""),
        schema=False,
        _file=file,
    )


def _schema(file: Traversable) -> Topic:
    title = json.loads(file.read_text(encoding="utf-8")).get("title", file.name)
    return Topic(name=file.name, title=str(title), schema=True, _file=file)


def _topic_name(name: str) -> str:
    """``docs/log-format.md`` and ``log-format.md`` are ``log-format``; ``README.md`` is
    ``readme``; ``schemas/receipt.schema.json`` is ``receipt.schema.json``."""
    if name.lower() in {"readme", "readme.md"}:
        return README
    for folder in (f"{_GUIDES}/", f"{_SCHEMAS}/"):
        name = name.removeprefix(folder)
    return name if name.endswith(_SCHEMA_SUFFIX) else name.removesuffix(".md")


def _title_key(text: str) -> str:
    return " ".join(text.replace("`", "").split()).casefold()


def _section_keys(title: str) -> set[str]:
    """What names a heading: its whole title, and for "7. Verification" also "7" and
    "verification"."""
    keys = {_title_key(title)}
    number = section_number(title)
    if number is not None:
        keys |= {number, _title_key(title.removeprefix(f"{number}."))}
    return keys
