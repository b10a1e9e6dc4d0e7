"""``racing-demon docs`` and the help that points at it (issue 16, point 10): the docs ship
with the package, every command's help names only documentation the user has, and shell
completion knows the topics."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from racing_demon import manual
from racing_demon.cli import main

from conftest import invoke, load_script

ROOT = Path(__file__).resolve().parents[1]
GUIDES = sorted((ROOT / "docs").glob("*.md"))
SCHEMAS = sorted((ROOT / "schemas").glob("*.schema.json"))


def test_docs_alone_lists_every_guide_and_schema_within_80_columns() -> None:
    code, out = invoke("docs")
    assert code == 0
    names = {line.split()[0] for line in out.splitlines() if line.startswith("  ")}
    assert {path.stem for path in GUIDES} | {"readme"} <= names
    assert {path.name for path in SCHEMAS} <= names
    assert "Guides (racing-demon docs TOPIC [SECTION]):" in out
    assert "  log-format  " in out and "The signed event log: format" in out
    assert max(len(line) for line in out.splitlines()) <= 80


@pytest.mark.parametrize("path", GUIDES, ids=lambda path: path.stem)
def test_a_guide_prints_as_the_repository_holds_it(path: Path) -> None:
    code, out = invoke("docs", path.stem)
    assert code == 0
    assert out == path.read_text(encoding="utf-8")


def test_the_readme_and_a_schema_print_too() -> None:
    assert invoke("docs", "readme") == (0, (ROOT / "README.md").read_text(encoding="utf-8"))
    schema = (ROOT / "schemas" / "receipt.schema.json").read_text(encoding="utf-8")
    assert invoke("docs", "receipt.schema.json") == (0, schema)


@pytest.mark.parametrize(
    ("spelling", "topic"),
    [
        ("docs/log-format.md", "log-format"),
        ("log-format.md", "log-format"),
        ("README.md", "readme"),
        ("schemas/receipt.schema.json", "receipt.schema.json"),
    ],
)
def test_the_paths_the_guides_use_name_the_same_topics(spelling: str, topic: str) -> None:
    # A reference read inside a printed guide ("docs/log-format.md §7") can be typed as is.
    assert invoke("docs", spelling) == invoke("docs", topic)


def test_a_section_by_number_or_title_runs_to_the_next_heading_of_its_level() -> None:
    code, out = invoke("docs", "log-format", "7")
    assert code == 0
    assert out.startswith("## 7. Verification\n")
    assert "\n### Codes\n" in out  # its subsections come with it
    assert "## 8. " not in out and "## 6. " not in out
    assert invoke("docs", "log-format", "§7") == (0, out)  # as the guides write it
    assert invoke("docs", "log-format", "verification") == (0, out)
    assert invoke("docs", "log-format", "7. Verification") == (0, out)
    code, state_text = invoke("docs", "rules", "state text")
    assert code == 0 and state_text.startswith("## 10. State text\n")
    code, run = invoke("docs", "tournament", "4")  # numbered at the third level
    assert code == 0 and run.startswith("### 4. Run the tables\n") and "### 5. " not in run


def test_an_unknown_topic_is_refused_with_the_closest_names() -> None:
    code, out = invoke("docs", "log-fromat")
    assert code == 2
    assert "Invalid value for TOPIC: no topic 'log-fromat': did you mean log-format?" in out
    code, out = invoke("docs", "nothing-like-it")
    assert code == 2
    assert "no topic 'nothing-like-it' ('racing-demon docs' lists them)" in out


def test_an_unknown_section_is_refused_with_the_guides_sections() -> None:
    code, out = invoke("docs", "log-format", "99")
    assert code == 2
    assert "Invalid value for SECTION: '99' names no section of log-format; its sections:" in out
    assert "\n  7. Verification\n    The rules: reserved names, `--rules`, and what reports" in out
    code, out = invoke("docs", "receipt.schema.json", "1")
    assert code == 2
    assert "receipt.schema.json is a schema: it has no sections" in out


def test_a_title_that_names_several_sections_is_refused(tmp_path: Path) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text("# Guide\n## 1. One\n### Notes\n## 2. Two\n### Notes\n", encoding="utf-8")
    topic = manual.Topic(name="guide", title="Guide", schema=False, _file=guide)
    assert [part.title for part in manual.sections(topic.text())] == [
        "Guide",
        "1. One",
        "Notes",
        "2. Two",
        "Notes",
    ]
    with pytest.raises(manual.TopicError, match="'notes' names several sections of guide"):
        manual.section(topic, "notes")
    assert manual.section(topic, "2").text == "## 2. Two\n### Notes\n"
    assert manual.section(topic, "Guide").level == 1


def test_a_heading_inside_a_code_block_is_not_a_section() -> None:
    text = "# Title\n\n```sh\n# a shell comment\n```\n\n## Real\n\n~~~\n## not one\n~~~\n"
    assert [part.title for part in manual.sections(text)] == ["Title", "Real"]
    readme = manual.sections(manual.find("readme").text())
    assert "NOT_AN_ACE: 0 demon>f+ TC: only an ace starts a new foundation" not in {
        part.title for part in readme
    }


def test_the_package_ships_identical_copies_of_the_guides() -> None:
    regen = load_script("regen_package_docs")
    assert regen.differences() == [], "run: python scripts/regen_package_docs.py"
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "docs/*.md" in pyproject["tool"]["setuptools"]["package-data"]["racing_demon"]


def test_the_copy_check_names_a_missing_a_stale_and_a_changed_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regen = load_script("regen_package_docs")
    packaged = tmp_path / "docs"
    packaged.mkdir()
    for name, data in regen.originals().items():
        (packaged / name).write_bytes(data)
    (packaged / "glossary.md").unlink()
    (packaged / "gone.md").write_text("# Gone\n")
    (packaged / "rules.md").write_text("# Edited\n")
    monkeypatch.setattr(regen, "PACKAGED", packaged)
    assert regen.differences() == [
        "glossary.md: missing",
        "gone.md: stale (no original)",
        "rules.md: differs from the original",
    ]
    monkeypatch.setattr(sys, "argv", ["regen_package_docs.py", "--check"])
    assert regen.main() == 1
    monkeypatch.setattr(sys, "argv", ["regen_package_docs.py"])
    assert regen.main() == 0
    assert regen.differences() == []


# -- the help names what the user has ------------------------------------------------------


def _commands(command: click.Command, path: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """Every command's and subcommand's help, unwrapped (one paragraph a line), so that a
    reference is never cut across lines."""
    width = 10_000
    context = click.Context(
        command, info_name=" ".join(path), terminal_width=width, max_content_width=width
    )
    yield " ".join(path), command.get_help(context)
    if isinstance(command, click.Group):
        for name in command.list_commands(context):  # the group loads them as named
            sub = command.get_command(context, name)
            assert sub is not None
            yield from _commands(sub, (*path, name))


HELP = dict(_commands(main, ("racing-demon",)))
REFERENCE = re.compile(r"racing-demon docs(?: ([a-z][\w.-]*\w))?(?: (§?\d+)\b)?")
# What only a reader of the repository has: a path into docs/ or schemas/, a .md file, a §.
REPOSITORY_PATH = re.compile(r"\bdocs/|\bschemas/|\.md\b|§\d")


def test_no_help_names_a_file_only_the_repository_has() -> None:
    found = [
        f"{name}: {line.strip()}"
        for name, text in HELP.items()
        for line in text.splitlines()
        if REPOSITORY_PATH.search(line.replace("racing-demon docs", ""))
    ]
    assert found == [], "name it as 'racing-demon docs TOPIC [SECTION]':\n" + "\n".join(found)


def test_every_topic_and_section_the_help_names_exists() -> None:
    references = {
        (name, match.group(1), match.group(2))
        for name, text in HELP.items()
        for match in REFERENCE.finditer(text)
    }
    named = {topic for _, topic, _ in references if topic is not None}
    assert {"log-format", "deal-spec", "receipt.schema.json"} <= named  # the test sees them
    for name, topic, section in references:
        if topic is None:
            continue
        found = manual.find(topic)  # TopicError names the command's stale reference
        if section is not None:
            assert manual.section(found, section).title.startswith(section.lstrip("§")), name


# -- shell completion ------------------------------------------------------------------------


def _complete(words: str, shell: str = "bash") -> list[str]:
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    result = CliRunner().invoke(
        main,
        [],
        prog_name="racing-demon",
        env={
            "_RACING_DEMON_COMPLETE": f"{shell}_complete",
            "COMP_WORDS": words,
            "COMP_CWORD": str(cword),
        },
    )
    assert result.exit_code == 0, result.output
    return [line for line in result.output.splitlines() if line]


def test_completion_knows_commands_topics_and_sections() -> None:
    assert _complete("racing-demon ver") == ["plain,verify"]
    assert _complete("racing-demon docs log") == [
        "plain,log-format",
        "plain,log-record.schema.json",
    ]
    assert _complete("racing-demon docs log-format 7") == ["plain,7"]
    # zsh shows each candidate with its help: a topic's title, a section's heading
    assert _complete("racing-demon docs log-f", "zsh") == [
        "plain",
        "log-format",
        "The signed event log: format",
    ]
    assert _complete("racing-demon docs tournament 4", "zsh") == [
        "plain",
        "4",
        "4. Run the tables",
    ]
    assert _complete("racing-demon docs no-such-topic ") == []


@pytest.mark.slow
def test_bash_completes_with_the_script_it_sources(tmp_path: Path) -> None:
    """The README's bash line, sourced in a real bash, completes a topic: the script calls
    the ``racing-demon`` command, here a wrapper that runs this tree's package."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "racing-demon"
    src = shlex.quote(str(ROOT / "src"))
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH={src} exec {shlex.quote(sys.executable)} -m racing_demon "$@"\n'
    )
    wrapper.chmod(0o755)
    script = (
        'eval "$(_RACING_DEMON_COMPLETE=bash_source racing-demon)"\n'
        "COMP_WORDS=(racing-demon docs log-f); COMP_CWORD=2\n"
        "_racing_demon_completion racing-demon\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["bash", "-c", script], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["log-format"]
