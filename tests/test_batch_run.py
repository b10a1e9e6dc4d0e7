"""``run_batch``: the verify command's whole run as one call of the library, without click.

Issue 30, point 2: "Move the use cases down: a batch run (`run_batch(settings, reporter) ->
ExitCode` or similar), resume beside the batch ... text and JSON reporters chosen by name
... a game server can call every use case without click." Each test runs the use case with
a reporter named as the command line names it and compares what it prints, writes and
returns with what ``racing-demon verify`` does for the same logs.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_batch import PINNED, batch, game, pub, run

from racing_demon.batch import BatchRun, BatchUsageError, run_batch
from racing_demon.log.keys import load_public_key, raw_public_bytes
from racing_demon.outcomes import ExitCode
from racing_demon.report.batch import REPORTERS, reporter_named
from racing_demon.report.text import Verbosity
from racing_demon.verify import Settings

__all__ = ["batch", "game", "pub"]  # fixtures of test_batch, used here by name

SAMPLES = Path(__file__).resolve().parents[1] / "sample_games"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Printed:
    """An ``echo`` that keeps what each stream got, as the command line shows it: without
    the ANSI colour the reporters write, which ``click.echo`` strips off a pipe."""

    def __init__(self) -> None:
        self.out = self.err = ""

    def __call__(self, text: str, to_stderr: bool) -> None:
        if to_stderr:
            self.err += _ANSI.sub("", text) + "\n"
        else:
            self.out += _ANSI.sub("", text) + "\n"


def test_a_batch_run_in_the_library_prints_and_writes_what_the_command_does(
    batch: Path, pub: Path, tmp_path: Path
) -> None:
    """A folder of logs, each verdict among them, with a --report file: the same lines, the
    same summary, the same report file, the same exit code."""
    code, out, err = run(
        "verify", batch, "--table-key", pub, "--jobs", "1", "--report", tmp_path / "cli.jsonl"
    )
    printed = Printed()
    here = BatchRun(logs=[str(batch)], settings=PINNED, jobs=1, report=str(tmp_path / "lib.jsonl"))
    returned = run_batch(here, reporter_named("text", echo=printed))
    assert (returned, printed.out, printed.err) == (code, out, err)
    assert returned is ExitCode.NO and re.search(r"\n  all +5  exit 1\n$", out)
    assert (tmp_path / "lib.jsonl").read_bytes() == (tmp_path / "cli.jsonl").read_bytes()


@pytest.mark.parametrize("name", sorted(REPORTERS))
def test_one_sample_log_prints_as_the_command_prints_it(name: str) -> None:
    """One log of sample_games, by each reporter chosen by name ("text", "json")."""
    log, key = SAMPLES / "table-3p-signed.jsonl", SAMPLES / "table.pub"
    json_flag = ["--json"] if name == "json" else []
    code, out, err = run("verify", log, "--table-key", key, *json_flag)
    printed = Printed()
    settings = Settings(table_key=raw_public_bytes(load_public_key(key)))
    reporter = reporter_named(name, Verbosity.NORMAL, printed)
    returned = run_batch(BatchRun(logs=[str(log)], settings=settings), reporter)
    assert (returned, printed.out, printed.err) == (code, out, err)
    assert returned is ExitCode.OK and "VERIFIED" in out.upper() and err == ""


def test_a_run_whose_options_contradict_is_refused_naming_them(batch: Path) -> None:
    """The checks the command made are the use case's: a server meets them too, as a
    BatchUsageError (the command line's exit 2) before anything is verified."""
    printed = Printed()
    with pytest.raises(BatchUsageError, match="give --report FILE") as refused:
        run_batch(
            BatchRun(logs=[str(batch)], settings=PINNED, resume=True),
            reporter_named("text", echo=printed),
        )
    assert refused.value.option is None and printed.out == printed.err == ""
    with pytest.raises(BatchUsageError, match="is also an input") as refused:
        run_batch(
            BatchRun(logs=[str(batch)], settings=PINNED, report=str(batch / "a-good.jsonl")),
            reporter_named("json", echo=printed),
        )
    assert refused.value.option == "--report"
    code, _, err = run("verify", batch, "--report", batch / "a-good.jsonl")
    assert code == 2 and "Invalid value for --report: the output" in err


def test_a_resumed_run_in_the_library_reuses_what_the_command_wrote(
    batch: Path, pub: Path, tmp_path: Path
) -> None:
    """Issue 30, point 2: "resume beside the batch". The command's --report FILE --resume
    is the use case's ``resume``: a file the command wrote is the library's cache, and the
    library prints and returns what the command prints the second time."""
    report = tmp_path / "r.jsonl"
    first = run("verify", batch, "--table-key", pub, "--report", report, "--resume")
    written = report.read_bytes()
    printed = Printed()
    again = BatchRun(logs=[str(batch)], settings=PINNED, report=str(report), resume=True)
    returned = run_batch(again, reporter_named("text", echo=printed))
    assert (returned, printed.out) == first[:2]
    assert printed.err == f"resumed: 5 of 5 verdicts reused from {report}\n"
    assert report.read_bytes() == written  # every verdict reused, nothing appended
    assert (returned, printed.out, printed.err) == run(
        "verify", batch, "--table-key", pub, "--report", report, "--resume"
    )


def test_the_batch_package_imports_dask_only_when_a_cluster_is_used() -> None:
    """Issue 30, point 3: "batch.py becomes a package with Dask in its own module": the
    package, the use case and the verify command load no Dask until --scheduler is given."""
    probe = (
        "import sys, racing_demon.batch, racing_demon.report.batch, racing_demon.cli.verify_cmd; "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in "
        "('distributed', 'dask', 'fsspec')))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert loaded == "[]\n"
