"""The package's layers import one way (STYLE.md, "The shape of the house").

Every import of every module under src/racing_demon, at any depth (a function's lazy import
and a ``TYPE_CHECKING`` one included), is read with ``ast`` and held to two small tables:
what a part of the package may import, and who may import a guarded module. To add a rule,
add a row. An import that breaks a rule for a reason goes in EXCEPTIONS with that reason,
and stays there only while the import does.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "racing_demon"

# What each part may import besides the standard library, layer by layer from the bottom
# (docs/architecture.md, "The layers"). A module is governed by the longest name here that
# it is or lies under; a part not named here (the command line) is not limited by it.
# Every part may name errors and spell counts the one way.
_ERRORS = {"racing_demon.errors", "racing_demon.wording"}
_GAME = {"racing_demon.game", *_ERRORS}
# Issue 30, point 4: "Move terminal-safe printing of hostile strings to an edge module".
_EDGES = {
    "racing_demon.files",
    "racing_demon.printing",
    "racing_demon.schema",
    "racing_demon.usage",  # what a caller of a use case can ask wrongly
    "jsonschema",
    "jsonschema_rs",
    "regress",
    *_ERRORS,
}
_LOG = {
    "racing_demon.log",
    "racing_demon.profiles",
    "cryptography",
    "nacl",
    "orjson",
    *_GAME,
    *_EDGES,
}
_MATCHES = {"racing_demon.replay", "racing_demon.verify", *_LOG}
_MANY_LOGS = {
    "racing_demon.recover",
    "racing_demon.evidence",
    "racing_demon.outcomes",
    "racing_demon.report_document",
    *_MATCHES,
}
_SERVE = {
    "racing_demon.serve",
    "racing_demon.sim",
    "racing_demon.table",
    "racing_demon.viewer.write",
    *_MATCHES,
}
MAY_IMPORT: dict[str, set[str]] = {
    "racing_demon.errors": set(),
    "racing_demon.wording": set(),
    "racing_demon.game": _GAME,  # the rules core: no click, jsonschema, cryptography, log
    # Issue 30, point 2: the output writer a server calls too names its file printably.
    "racing_demon.files": {"racing_demon.files", "racing_demon.printing", *_ERRORS},
    "racing_demon.printing": set(),  # escapes hostile text: the standard library only
    "racing_demon.schema": _EDGES,
    "racing_demon.profiles": {"racing_demon.profiles", *_GAME, *_EDGES},
    "racing_demon.manual": {"racing_demon.manual", *_ERRORS},  # the shipped docs: files only
    # Issue 34, point 2: the browser runtime's install (urllib, tarfile, hashlib) and its
    # checked cache: the standard library only.
    "racing_demon.runtime": set(),
    "racing_demon.log": _LOG - {"racing_demon.profiles"},  # the file format only
    "racing_demon.replay": _LOG | {"racing_demon.replay"},
    "racing_demon.verify": _LOG | {"racing_demon.verify"},
    "racing_demon.table": _MATCHES | {"racing_demon.table"},
    # Issue 30, point 3: "one job per module". Only the table's start (a genesis checked by
    # the verifier, a log replayed to resume) and the Table need a match's verifier; its
    # errors, players and a submission's checks stand on the file format alone.
    "racing_demon.table.errors": _LOG,
    "racing_demon.table.players": _LOG | {"racing_demon.table.errors"},
    "racing_demon.table.submissions": _LOG,
    "racing_demon.sim": _MATCHES | {"racing_demon.table", "racing_demon.sim"},
    "racing_demon.recover": _MATCHES | {"racing_demon.recover"},
    "racing_demon.outcomes": _MATCHES
    | {"racing_demon.recover", "racing_demon.evidence", "racing_demon.outcomes"},
    "racing_demon.audit": _MATCHES | {"racing_demon.audit"},
    # Issue 35, point 6: the contested plays, rebuilt as the hands are.
    "racing_demon.races": _MATCHES | {"racing_demon.races"},
    # Issue 30, point 2: the audit's use case, for any caller without click.
    "racing_demon.audit_run": _MANY_LOGS
    | {"racing_demon.audit", "racing_demon.audit_run", "racing_demon.races"},
    "racing_demon.evidence": _MATCHES | {"racing_demon.evidence"},
    # Issue 30, point 2: "a game server can call every use case without click": each
    # command's use case below its reporters, and what a caller can ask wrongly below all.
    "racing_demon.usage": _ERRORS,
    "racing_demon.replay_run": _MATCHES | {"racing_demon.outcomes", "racing_demon.usage"},
    "racing_demon.deal_run": _MATCHES | {"racing_demon.outcomes", "racing_demon.usage"},
    "racing_demon.recover_run": _MATCHES | {"racing_demon.outcomes", "racing_demon.recover"},
    "racing_demon.keys_run": _LOG | {"racing_demon.outcomes", "racing_demon.usage"},
    # Issue 30, point 3 ("one job per module"): the finding types below everything, then the
    # log's one scan, the receipts judged on its facts, and a copy through the verifier's steps.
    "racing_demon.evidence.findings": set(),
    "racing_demon.evidence.scan": _MATCHES | {"racing_demon.evidence.findings"},
    "racing_demon.evidence.receipts": _MATCHES
    | {"racing_demon.evidence.findings", "racing_demon.evidence.scan"},
    "racing_demon.evidence.copies": _MATCHES | {"racing_demon.evidence.findings"},
    # Issue 30, point 4: "give `Report` one place that writes and reads its document",
    # below the batch that reads its lines back and the reporters that write them.
    "racing_demon.report_document": _MATCHES | {"racing_demon.outcomes"},
    # Dask's workers read the logs themselves, through fsspec (the dask extra).
    "racing_demon.batch": _MANY_LOGS | {"racing_demon.batch", "distributed", "fsspec"},
    # Issue 30, point 3: the batch package, a module per job, the use case on top of them.
    "racing_demon.batch.names": _MANY_LOGS | {"fsspec"},
    "racing_demon.batch.local": _MANY_LOGS,
    "racing_demon.batch.fetch": _MANY_LOGS
    | {"racing_demon.batch.local", "racing_demon.batch.names"},
    "racing_demon.batch.dask": _MANY_LOGS
    | {
        "racing_demon.batch.version",
        "racing_demon.batch.fetch",
        "racing_demon.batch.local",
        "racing_demon.batch.names",
        "distributed",
    },
    "racing_demon.batch.cache": _MANY_LOGS
    | {
        "racing_demon.batch.version",
        "racing_demon.batch.dask",
        "racing_demon.batch.fetch",
        "racing_demon.batch.local",
        "racing_demon.batch.names",
    },
    "racing_demon.batch.summary": _MANY_LOGS,
    # The reason codes' sentences: every family's enum, the table's and tournament's included.
    "racing_demon.explanations": _MANY_LOGS
    | {
        "racing_demon.table",
        "racing_demon.tournament",
        "racing_demon.serve.protocol",
        "racing_demon.serve.journal",
    },
    # Issue 31: the play protocol reads a client's JSON with the log's strict reader and
    # the schemas; no web stack.
    "racing_demon.serve.protocol": _LOG | {"racing_demon.serve.protocol"},
    # Issue 31, durability: the journal stands on the standard library; the data folder
    # also makes and reads the table's key (log.keys).
    "racing_demon.serve.data": {"racing_demon.log", "cryptography", *_ERRORS},
    "racing_demon.serve.journal": {"racing_demon.serve.data", "orjson", *_ERRORS},
    # The reporters sit above what they print: the tournament's standings included.
    "racing_demon.report": _MANY_LOGS
    | {
        "racing_demon.report",
        "racing_demon.batch",
        "racing_demon.audit",
        "racing_demon.audit_run",
        "racing_demon.races",
        "racing_demon.replay_run",
        "racing_demon.deal_run",
        "racing_demon.recover_run",
        "racing_demon.keys_run",
        "racing_demon.viewer.write",
        "racing_demon.sim",
        "racing_demon.tournament",
        "racing_demon.serve_run",
    },
    # A tournament's plan is published before any log exists: it stands on the file format
    # (canonical JSON, signatures) and the profiles. Its scoring reads many logs, and its
    # simulation plays every table with the bots. Its standings are printed by report/,
    # which it does not import (issue 30, point 4).
    "racing_demon.tournament": _MANY_LOGS
    | {
        "racing_demon.batch",
        "racing_demon.sim",
        "racing_demon.table",
        "racing_demon.tournament",
    },
    # Matchpoints compare hand scores: the game's shapes and nothing that reads a file.
    "racing_demon.tournament.matchpoints": _GAME | {"racing_demon.tournament.matchpoints"},
    "racing_demon.tournament.contribute": _LOG | {"racing_demon.tournament.contribute"},
    "racing_demon.tournament.plan": _LOG
    | {
        "racing_demon.tournament.plan",
        "racing_demon.tournament.plan_document",
        "racing_demon.tournament.contribute",
    },
    # Issue 30, point 3: "one job per module": the plan document apart from making,
    # checking and reading plans, which stand on it.
    "racing_demon.tournament.plan_document": _LOG
    | {"racing_demon.tournament.plan_document", "racing_demon.tournament.contribute"},
    "racing_demon.tournament.sheets": _LOG | {"racing_demon.tournament.plan"},
    # Issue 30, point 2: what the use cases share with their callers (a refusal, an output
    # checked and written) stands on the edges alone.
    "racing_demon.tournament.outputs": _EDGES,
    # The browser tests' and bench's headless Chromium is driven with selenium (test extra).
    "racing_demon.testing": _MATCHES | {"racing_demon.table", "racing_demon.testing", "selenium"},
    # The viewer's page embeds the verifier's report as `verify --json` prints it, and the
    # one audit (issue 30, point 3: "its second audit gives way to the one audit"). It
    # prints nothing: what `view` prints is report/'s (issue 30, point 4: "Reporters at
    # the top").
    # Issue 34, point 3: an engine page inlines the installed runtime (racing_demon.runtime).
    "racing_demon.viewer": _MANY_LOGS
    | {"racing_demon.audit", "racing_demon.races", "racing_demon.viewer", "racing_demon.runtime"},
    # Issue 30, point 3: "the viewer's words and frames in their own modules". A record's
    # words and the table after it need the game and the record, never the verifier.
    "racing_demon.viewer.words": _LOG | {"racing_demon.viewer.words"},
    "racing_demon.viewer.frames": _LOG | {"racing_demon.viewer.page"},
    # Issue 30, point 2: view's use case writes the page; its reporter, above, prints.
    "racing_demon.viewer.write": _MANY_LOGS
    | {
        "racing_demon.viewer.model",
        "racing_demon.viewer.page",
        "racing_demon.viewer.engine",
        "racing_demon.runtime",
    },
    # Issue 30, point 1: the page reads its lines with the verifier's reader, no other.
    "racing_demon.viewer.lines": _LOG,
    # Issue 31: the server stands on the table, the bots, the verifier and the view's use
    # case; the web stack (the serve extra) only where HTTP is spoken (serve-design.md).
    "racing_demon.serve": _SERVE,
    "racing_demon.serve.app": _SERVE | {"aiohttp"},
    "racing_demon.serve.lobby": _SERVE | {"aiohttp"},
    "racing_demon.serve.archive": _SERVE | {"aiohttp"},
    # Issue 32: the browser client's pages and files; the table as the view page names
    # its piles (viewer.frames), cut to what a player sees.
    # Issue 34, point 4: and the engine's files, the installed runtime's and the bundle's.
    "racing_demon.serve.pages": {
        "aiohttp",
        "racing_demon.runtime",
        "racing_demon.viewer.engine",
        *_ERRORS,
    },
    "racing_demon.serve.live_view": _SERVE | {"racing_demon.viewer.frames"},
    # The use case starts the web server (aiohttp's runner and site) and the routes; at the
    # start it cuts a live log's unacknowledged torn line with recover's judgement.
    "racing_demon.serve_run": _SERVE | {"racing_demon.outcomes", "racing_demon.recover", "aiohttp"},
}

# Who may import each of these; no other module of the package does.
ONLY_IMPORTED_BY: dict[str, set[str]] = {
    "click": {"racing_demon.cli"},  # the command line is the only click layer
    "racing_demon.cli": {"racing_demon.cli", "racing_demon.__main__"},
    "racing_demon.testing": {"racing_demon.testing"},  # test support is not the product
    "selenium": {"racing_demon.testing.browser"},  # a test dependency, for the browser alone
    "nacl": {"racing_demon.log.signing"},  # libsodium checks the signature equation, only there
    # Issue 30, point 3: "batch.py becomes a package with Dask in its own module".
    "distributed": {"racing_demon.batch.dask"},
    "fsspec": {"racing_demon.batch.names"},  # which logs a URL names, and opening one
    # Issue 31: the serve extra's web stack, where HTTP is spoken and the server started.
    "aiohttp": {
        "racing_demon.serve.app",
        "racing_demon.serve.lobby",
        "racing_demon.serve.archive",
        "racing_demon.serve.pages",
        "racing_demon.serve_run",
    },
}

# (importer, imported) pairs that break a rule above, with the reason each still stands.
EXCEPTIONS: dict[tuple[str, str], str] = {
    ("racing_demon.verify.in_page", "racing_demon.report_document"): (
        "issue 34, point 1: the browser page's entry answers with a log's report exactly as "
        "`verify --json` writes it, so through its one writer, which sits above verify/ to "
        "read reports back for the batch; the page loads this module by its agreed name"
    ),
}


def within(name: str, part: str) -> bool:
    return name == part or name.startswith(part + ".")


def governing(name: str, table: dict[str, set[str]]) -> str | None:
    """The longest name of ``table`` that ``name`` is or lies under."""
    parts = [part for part in table if within(name, part)]
    return max(parts, key=len) if parts else None


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_names(source: str, module: str, is_package: bool) -> Iterator[tuple[int, str]]:
    """(line, module imported) for every import in ``source``, relative ones resolved; a
    ``from X import y`` names ``X.y`` when that is a module of the package, else ``X``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                yield node.lineno, submodule if submodule in MODULES else base


def is_stdlib(name: str) -> bool:
    return name.split(".")[0] in sys.stdlib_module_names


def all_imports() -> Iterator[tuple[str, int, str]]:
    """(importer, line, imported) across the package."""
    for module, path in MODULES.items():
        source = path.read_text(encoding="utf-8")
        for line, name in imported_names(source, module, path.name == "__init__.py"):
            yield module, line, name


def broken_rules(imports: Iterable[tuple[str, int, str]]) -> list[tuple[str, int, str, str]]:
    """(importer, line, imported, rule) for every import that breaks a rule of the tables."""
    broken = []
    for module, line, name in imports:
        part = governing(module, MAY_IMPORT)
        allowed = MAY_IMPORT[part] if part is not None else set()
        if part is not None and not is_stdlib(name) and not any(within(name, a) for a in allowed):
            rule = f"{part} imports only the standard library and {', '.join(sorted(allowed))}"
            broken.append((module, line, name, rule))
        guarded = governing(name, ONLY_IMPORTED_BY)
        importers = ONLY_IMPORTED_BY[guarded] if guarded is not None else set()
        if guarded is not None and not any(within(module, i) for i in importers):
            rule = f"{guarded} is imported only by {', '.join(sorted(importers))}"
            broken.append((module, line, name, rule))
    return broken


def excepted(module: str, name: str) -> str | None:
    for (importer, imported), reason in EXCEPTIONS.items():
        if module == importer and within(name, imported):
            return reason
    return None


def test_the_layers_import_one_way() -> None:
    offences = [
        f"{module} line {line} imports {name}: {rule}"
        for module, line, name, rule in broken_rules(all_imports())
        if excepted(module, name) is None
    ]
    assert offences == []


def test_the_game_imports_only_the_standard_library() -> None:
    """Issue 34, point 1: "`game/` imports only the standard library ... and
    `tests/test_layers.py` holds `game/` to the standard library": the rules core runs
    anywhere Python runs, the browser page's Pyodide included."""
    outside = [
        f"{module} line {line} imports {name}"
        for module, line, name in all_imports()
        if within(module, "racing_demon.game")
        and not is_stdlib(name)
        and not any(within(name, part) for part in _GAME)
    ]
    assert outside == []
    assert not any(within(importer, "racing_demon.game") for importer, _ in EXCEPTIONS)


def test_every_exception_is_still_needed() -> None:
    broken = {(module, name) for module, _, name, _ in broken_rules(all_imports())}
    for importer, imported in EXCEPTIONS:
        assert any(module == importer and within(name, imported) for module, name in broken), (
            f"{importer} no longer imports {imported}: drop its exception"
        )


def test_the_tables_name_parts_that_exist() -> None:
    # A renamed package would otherwise leave its rules governing nothing.
    for part in [*MAY_IMPORT, *ONLY_IMPORTED_BY]:
        if part.startswith("racing_demon"):
            assert part in MODULES, part
    assert "racing_demon.game.deal" in MODULES and "racing_demon.__main__" in MODULES


@pytest.mark.parametrize(
    ("source", "module", "is_package", "expected"),
    [
        ("import os, click.core as c", "racing_demon.x", False, ["os", "click.core"]),
        ("def f():\n    import cryptography\n", "racing_demon.x", False, ["cryptography"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import jsonschema\n",
            "racing_demon.x",
            False,
            ["typing", "jsonschema"],
        ),
        ("from racing_demon import cli", "racing_demon.x", False, ["racing_demon.cli"]),
        ("from racing_demon.game import Card", "racing_demon.x", False, ["racing_demon.game"]),
        ("from . import engine", "racing_demon.game.deal", False, ["racing_demon.game.engine"]),
        ("from .cards import Card", "racing_demon.game.deal", False, ["racing_demon.game.cards"]),
        ("from ..log import reader", "racing_demon.game.deal", False, ["racing_demon.log.reader"]),
        ("from . import stuck", "racing_demon.game", True, ["racing_demon.game.stuck"]),
    ],
)
def test_imported_names(source: str, module: str, is_package: bool, expected: list[str]) -> None:
    assert [name for _, name in imported_names(source, module, is_package)] == expected


def test_the_rules_catch_what_they_forbid() -> None:
    imports = [
        ("racing_demon.game.engine", 1, "click"),  # breaks two rules
        ("racing_demon.game.engine", 2, "racing_demon.log.reader"),
        ("racing_demon.schema.compiled", 3, "racing_demon.game.cards"),
        ("racing_demon.log.reader", 4, "racing_demon.verify"),
        ("racing_demon.verify", 5, "racing_demon.cli.options"),  # breaks two rules
        ("racing_demon.audit", 6, "racing_demon.testing.playout"),  # two rules
        ("racing_demon.report.text", 7, "click.core"),  # two rules
        # Issue 30, point 4: "put the tournament printers in `report/`"; report/ prints
        # the standings, tournament/ never imports report/, and matchpoints read no log.
        ("racing_demon.tournament.score", 17, "racing_demon.report.text"),
        ("racing_demon.tournament.matchpoints", 18, "racing_demon.batch"),
        # Issue 30, point 4: printing hostile strings is an edge, below every reader.
        ("racing_demon.printing", 21, "racing_demon.report.text"),
        # Issue 30, point 2: the audit's use case runs without click, below its reporters.
        ("racing_demon.audit_run", 25, "click"),  # two rules
        ("racing_demon.audit_run", 26, "racing_demon.report.audit"),
        ("racing_demon.report_document", 30, "racing_demon.report.verify"),
        ("racing_demon.table.submissions", 31, "racing_demon.verify"),
        ("racing_demon.tournament.plan_document", 32, "racing_demon.tournament.plan"),
        # Issue 30, point 2: "a game server can call every use case without click": the
        # batch's and the simulation's use cases import neither click nor their reporters.
        ("racing_demon.batch.run", 35, "click"),  # two rules
        ("racing_demon.sim.run", 36, "click"),  # two rules
        ("racing_demon.sim.run", 37, "racing_demon.report.simulation"),
        ("racing_demon.files", 38, "racing_demon.cli.output"),  # two rules
        ("racing_demon.sim.run", 40, "racing_demon.outcomes"),  # a row above the table's
        # Issue 30, point 2: every use case runs without click, below its reporters.
        ("racing_demon.replay_run", 61, "click"),  # two rules
        ("racing_demon.deal_run", 62, "racing_demon.report.deal"),
        ("racing_demon.viewer.write", 63, "racing_demon.report.view"),
        ("racing_demon.keys_run", 64, "racing_demon.cli.options"),  # two rules
        # Allowed:
        ("racing_demon.game.cards", 8, "enum"),
        ("racing_demon.game.engine", 9, "racing_demon.game.state"),
        ("racing_demon.log.keys", 10, "cryptography.exceptions"),
        ("racing_demon.log.reader", 11, "racing_demon.errors"),
        ("racing_demon.schema", 12, "jsonschema.validators"),
        ("racing_demon.cli.options", 13, "click"),
        ("racing_demon.__main__", 14, "racing_demon.cli"),
        ("racing_demon.testing.randomplay", 15, "racing_demon.testing.playout"),
        ("racing_demon.verify", 16, "racing_demon.game.deal"),  # verification reads the game
        ("racing_demon.report.tournament", 19, "racing_demon.tournament.score"),
        ("racing_demon.tournament.matchpoints", 20, "racing_demon.game.duplicate"),
        ("racing_demon.log.reader", 22, "racing_demon.printing"),
        ("racing_demon.batch.cache", 23, "racing_demon.printing"),
        ("racing_demon.viewer.model", 24, "racing_demon.printing"),
        ("racing_demon.report.audit", 27, "racing_demon.audit_run"),
        ("racing_demon.batch.cache", 28, "racing_demon.report_document"),
        ("racing_demon.viewer.model", 29, "racing_demon.report_document"),
        ("racing_demon.table.start", 33, "racing_demon.verify"),
        ("racing_demon.tournament.plan", 34, "racing_demon.tournament.plan_document"),
        ("racing_demon.files", 39, "racing_demon.printing"),
        # Issue 30, point 2: the tournament's use cases run without click, below their
        # reporters, which are passed in.
        ("racing_demon.tournament.organise", 41, "racing_demon.report.tournament"),
        ("racing_demon.tournament.score_run", 42, "click"),  # two rules
        ("racing_demon.tournament.outputs", 43, "racing_demon.tournament.plan"),
        ("racing_demon.report.tournament", 44, "racing_demon.tournament.organise"),
        ("racing_demon.tournament.simulate", 45, "racing_demon.tournament.outputs"),
        ("racing_demon.report.view", 65, "racing_demon.viewer.write"),
        ("racing_demon.replay_run", 66, "racing_demon.usage"),
    ]
    broken = [1, 1, 2, 3, 4, 5, 5, 6, 6, 7, 7, 17, 18, 21, 25, 25, 26, 30, 31, 32]
    broken += [35, 35, 36, 36, 37, 38, 38, 40, 61, 61, 62, 63, 64, 64, 41, 42, 42, 43]
    assert [line for _, line, _, _ in broken_rules(imports)] == broken
