"""Issue 29, item 2: "Never print, log or embed a secret the user gave: name its
commitment instead." Every command that takes ``--secret`` is run with a wrong secret and,
where the secret is still private (a log with no final record, a plan before play), with
the right one; no output it makes, standard output, standard error or a file it writes,
holds the secret's hex."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import click
from click.testing import CliRunner

from racing_demon.cli import main
from racing_demon.game.deal import commitment
from racing_demon.replay import find_secret

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_games"
LOG = SAMPLES / "table-3p-signed.jsonl"
PUB = SAMPLES / "table.pub"
PLAN = SAMPLES / "tournament" / "plan.json"
ORGANISER_SECRET = bytes(range(64, 96))  # scripts/regen_sample_games.py's fixture
WRONG = hashlib.sha256(b"a secret nobody committed to").digest()


def _commands(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """The path of every command under ``command`` that takes ``--secret``."""
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None
            yield from _commands(sub, (*path, name))
    elif any("--secret" in param.opts for param in command.params):
        yield path


def _run(tmp_path: Path, secret: bytes, *args: str) -> str:
    """Everything a run shows or writes: its standard output and error, and every file
    it left in ``tmp_path``."""
    result = CliRunner().invoke(main, list(args), env={"RD_SECRET": secret.hex()})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    written = b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())
    return result.stdout + result.stderr + written.decode("utf-8", "replace")


def _unfinished(tmp_path: Path, torn: bool = False) -> Path:
    lines = LOG.read_bytes().splitlines(keepends=True)
    path = tmp_path / "unfinished.jsonl"
    path.write_bytes(b"".join(lines[:30]) + (lines[30][:25] if torn else b""))
    return path


def _log_runs(tmp_path: Path) -> list[tuple[str, ...]]:
    log = str(_unfinished(tmp_path))
    torn = tmp_path / "torn"
    torn.mkdir()
    recovered = str(_unfinished(torn, torn=True))
    secret = ("--secret", "env:RD_SECRET")
    key = ("--table-key", str(PUB))
    return [
        ("verify", log, *key, *secret),
        ("verify", log, *key, *secret, "--json"),
        ("verify", log, *key, *secret, "--report", str(tmp_path / "report.jsonl")),
        ("verify", str(LOG), *key, *secret, "--json"),
        ("replay", log, *secret),
        ("replay", log, *secret, "--json"),
        ("replay", str(LOG), *secret),
        ("recover", recovered, *key, *secret, "--dry-run"),
        ("recover", recovered, *key, *secret, "--json", "--dry-run"),
        ("recover", recovered, *key, *secret),
        ("view", log, *key, *secret, "-o", str(tmp_path / "page.html"), "--force"),
        ("view", str(LOG), *key, *secret, "-o", str(tmp_path / "final.html"), "--force"),
        ("deal", "--log", log, *secret),
        ("deal", "--log", str(LOG), *secret, "--json"),
        ("deal", *secret, "--entropy", "ab" * 16, "--entropy", "cd" * 16),
        ("deal", *secret, "--entropy", "ab" * 16, "--entropy", "cd" * 16, "--json"),
    ]


def test_every_command_that_takes_a_secret_is_covered() -> None:
    """A new command with --secret must join the runs below."""
    assert set(_commands(main)) == {
        ("deal",),
        ("recover",),
        ("replay",),
        ("seed", "check"),
        ("tournament", "check"),
        ("tournament", "commit"),
        ("tournament", "plan"),
        ("tournament", "simulate"),
        ("verify",),
        ("view",),
    }


def test_no_log_command_shows_a_secret_given(tmp_path: Path) -> None:
    right = find_secret(LOG)
    assert right is not None
    for secret in (WRONG, right):  # right: the unfinished log has not revealed it yet
        for args in _log_runs(tmp_path):
            shown = _run(tmp_path, secret, *args)
            secret_in_log = secret == right and str(LOG) in args
            if not secret_in_log:
                assert secret.hex() not in shown.lower(), args
        shutil.rmtree(tmp_path)
        tmp_path.mkdir()


def test_a_wrong_secret_is_named_by_its_commitment(tmp_path: Path) -> None:
    """SEED_MISMATCH's ``expected`` is the commitment of the secret given."""
    shown = _run(
        tmp_path, WRONG, "verify", str(_unfinished(tmp_path)), "--table-key", str(PUB),
        "--secret", "env:RD_SECRET",
    )  # fmt: skip
    assert "SEED_MISMATCH" in shown and commitment(WRONG) in shown


def test_seed_check_never_shows_the_secret(tmp_path: Path) -> None:
    for secret in (WRONG, ORGANISER_SECRET):
        for extra in ((), ("--json",)):
            args = ("seed", "check", commitment(ORGANISER_SECRET), "--secret", "env:RD_SECRET")
            assert secret.hex() not in _run(tmp_path, secret, *args, *extra)


def test_no_tournament_command_shows_a_secret_given(tmp_path: Path) -> None:
    secret = ("--secret", "env:RD_SECRET")
    runs = [
        ("tournament", "commit", *secret, "--name", "Cup", "--tables", "2", "--seats", "2",
         "--hands", "1", "-o", "{out}/cup.json"),
        ("tournament", "commit", *secret, "--name", "Cup", "--tables", "2", "--seats", "2",
         "--hands", "1"),
        ("tournament", "check", str(PLAN), *secret),
        ("tournament", "check", str(PLAN), *secret, "--json"),
        ("tournament", "check", str(PLAN), *secret, "--sheets", "{out}/sheets.html"),
        ("tournament", "simulate", str(PLAN), *secret, "--signing-key", "{key}", "--seed",
         "s", "--out", "{out}/logs"),
        ("tournament", "plan", *secret, "--name", "Cup", "--tables", "2", "--seats", "2",
         "--hands", "1", "--contribution", "{contribution}", "-o", "{out}/plan.json",
         "--sheets", "{out}/sheets.html"),
    ]  # fmt: skip
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    assert CliRunner().invoke(main, ["keygen", str(inputs / "table")]).exit_code == 0
    for number, given in enumerate((WRONG, ORGANISER_SECRET)):
        # The terms every contribution signs are published with the commitment to the
        # secret given, and must show no more of it than that commitment.
        published = tmp_path / f"{number}-terms"
        published.mkdir()
        terms = published / "terms.json"
        shown = _run(
            published, given, "tournament", "commit", *secret, "--name", "Cup", "--tables",
            "2", "--seats", "2", "--hands", "1", "-o", str(terms),
        )  # fmt: skip
        assert given.hex() not in shown.lower()
        assert commitment(given) in terms.read_text(encoding="utf-8")
        contribution = inputs / f"{number}.json"
        made = CliRunner().invoke(
            main, ["tournament", "contribute", str(terms), "--by", "org", "-o", str(contribution)]
        )
        assert made.exit_code == 0, made.output
        for run, args in enumerate(runs):
            out = tmp_path / f"{number}-{run}"
            out.mkdir()
            filled = [a.format(key=inputs / "table.key", contribution=contribution, out=out)
                      for a in args]  # fmt: skip
            shown = _run(out, given, *filled)
            # The right secret is public once revealed: the logs simulate writes hold it.
            if given is WRONG or filled[1] in ("plan", "commit"):
                assert given.hex() not in shown.lower(), filled
        assert (out / "plan.json").exists()  # the right secret made a plan
