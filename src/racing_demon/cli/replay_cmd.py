"""``racing-demon replay``: show the table as it stood after any record of a log."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import click

from racing_demon.cli.options import (
    SECRET_SOURCES,
    dealer_secret_option,
    json_option,
    limits_options,
)
from racing_demon.cli.output import claim_stdin_log, named_log
from racing_demon.files import InMemoryLog, open_log
from racing_demon.game.deal import check_reveal
from racing_demon.game.flow import FlowCode, MatchFlow, RecordKind
from racing_demon.game.state import State
from racing_demon.log.reader import Limits, Line, ReadCode, ReadError
from racing_demon.log.records import Final, Genesis, Record
from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.replay import (
    EmptyLogError,
    Race,
    ReplayError,
    Snapshot,
    follow,
    genesis_and_secret,
    refusal_words,
    replay,
)
from racing_demon.report.documents import replay_document
from racing_demon.report.text import genesis_text, next_text, table_text
from racing_demon.verify import Report, Settings, Verdict, verify_stream

Chosen = tuple[State | None, Record | None, tuple[str, ...], Race | None]


@dataclass
class _Pick:
    """The table after record ``at_seq`` (the last when None) and what followed it."""

    at_seq: int | None
    chosen: Chosen | None = None
    following: Record | ReplayError | ReadError | None = None
    following_lost_to: Race | None = None
    last_seq: int = 0

    def see(self, snapshot: Snapshot) -> bool:
        """Take ``snapshot``, the next table; True once nothing after it is needed."""
        self.last_seq = snapshot.seq
        if self.chosen is not None and self.at_seq is not None:
            self.following, self.following_lost_to = snapshot.record, snapshot.lost_to
            return True
        if self.at_seq is None or snapshot.seq == self.at_seq:
            self.chosen = (snapshot.state, snapshot.record, snapshot.names, snapshot.lost_to)
        return False


@dataclass
class _PickVisitor:
    """The pick taken on verification's pass (a ``PassVisitor``). When the whole log
    verifies, it is what ``replay`` would show, and the genesis and the secret are the
    first and last records'; when the flow refused a record (steps 1-6 held), the replay
    stops there too, with the same words (``refused``): either way the log is read once."""

    pick: _Pick
    snapshot: Snapshot = field(default_factory=Snapshot)
    genesis: Record | None = None
    last: Record | None = None
    done: bool = False
    whole: bool = False  # the pass replayed the whole log and it held
    refused: ReplayError | None = None  # the record the flow refused, right after ``last``

    def visit(self, line: Line, record: Record, flow: MatchFlow) -> None:
        if record.seq == 0:  # the pass replays again from the genesis
            self.pick, self.snapshot, self.done = _Pick(self.pick.at_seq), Snapshot(), False
            self.genesis = record
        self.last = record
        if not self.done:
            follow(self.snapshot, record, flow)
            self.done = self.pick.see(self.snapshot)

    def end(self, report: Report) -> None:
        self.whole = report.verdict in (Verdict.VERIFIED, Verdict.UNPINNED)
        finding = report.finding
        if (
            finding is not None
            and isinstance(finding.code, FlowCode)  # steps 7-10: the flow's refusal
            and self.last is not None
            and finding.seq == self.last.seq + 1
        ):
            words = refusal_words(finding.code, finding.rule, finding.move, finding.message)
            self.refused = ReplayError(finding.seq, words)

    def replayed(self) -> bool:
        """Whether the pass replayed all that ``replay`` shows of this log."""
        return self.genesis is not None and (self.whole or self.refused is not None)

    def revealed(self) -> bytes | None:
        final = None if self.last is None else self.last.payload
        return bytes.fromhex(final.secret) if isinstance(final, Final) else None


@click.command(
    short_help="Show the table after any record of a log.",
    epilog="""\b
Examples:
  racing-demon replay sample_games/table-3p-signed.jsonl
  racing-demon replay game.jsonl --at 120
  # a log with no final record yet:
  racing-demon replay unfinished.jsonl --secret file:secret.txt
  # the log on standard input:
  racing-demon replay - --at 40 < game.jsonl
""",
)
@click.argument(
    "log",
    # Not exists=True: click's message would show a name that is not UTF-8 with U+FFFD,
    # where every other message spells it \xHH; a missing file is "cannot read LOG".
    type=click.Path(allow_dash=True),
    is_eager=True,  # LOG - claims standard input before --secret stdin reads it
    callback=claim_stdin_log,
)
@click.option(
    "--at", "at_seq", type=click.IntRange(0), help="Record to stop after [default: last]."
)
@dealer_secret_option("The dealer secret (64 hex), for a log with no final record yet.")
@limits_options
@json_option
def replay_command(
    log: str, at_seq: int | None, secret: bytes | None, limits: Limits, as_json: bool
) -> None:
    """Print the table after record AT: every seat's demon top and count, work piles,
    waste top, stock count; the foundations; and whose move came next. Record 0, the
    genesis, shows the seats and their keys, the rules and the commitment (text only:
    no table is dealt yet, and it needs no secret).

    This rebuilds the table through the match flow, up to the first record the flow
    refuses (`racing-demon verify` says why the log does not verify): without --at, the
    table just before that record is shown, with the refusal, and the exit code is 1.
    A LOG of - is the log on standard input (at most --max-file-bytes).
    """
    pick = _Pick(at_seq)
    source = named_log(log, limits)
    shown = printable(str(source))
    try:
        with open_log(source) as stream:  # the one time the log is opened
            visitor = _PickVisitor(_Pick(at_seq))
            verify_stream(stream, Settings(seed=secret, limits=limits), visitors=(visitor,))
            if visitor.replayed():
                # Nothing more to read: what replay shows is taken, to the end or the refusal.
                assert visitor.genesis is not None
                genesis_record, revealed = visitor.genesis, visitor.revealed()
                pick = visitor.pick
            else:
                in_file = not isinstance(source, InMemoryLog)
                genesis_record, revealed = genesis_and_secret(stream, limits, in_file=in_file)
            genesis = genesis_record.payload
            assert isinstance(genesis, Genesis)  # genesis_and_secret returns the genesis
            if secret is not None and not check_reveal(secret, genesis.commitment):
                # As deal --log does: a secret that opens no commitment replayed as far as
                # a PACK_MISMATCH at record 1, "the pack is not the one the seed deals".
                raise click.BadParameter(
                    f"does not open the commitment of {shown}'s genesis ({genesis.commitment})",
                    param_hint="--secret",
                )
            if at_seq == 0:
                _show_genesis(genesis_record, as_json)
                return
            if visitor.refused is not None and not visitor.done:
                raise visitor.refused
            if not visitor.replayed():
                secret = secret or revealed
                if secret is None:
                    raise click.UsageError(
                        "the log has no final record: give the dealer secret, --secret SOURCE "
                        f"({SECRET_SOURCES})"
                    )
                # Replay goes on past what verification refuses at steps 1-6 (a signature,
                # the chain, the secret), which the pass does not: it replays the same open
                # file.
                for snapshot in replay(stream, secret, limits):
                    if pick.see(snapshot):
                        break
    except EmptyLogError as error:
        click.echo(f"cannot replay {shown}: {error}", err=True)
        raise SystemExit(ExitCode.NO) from error
    except ReplayError as error:
        if pick.chosen is None:  # the record asked for, or the genesis, is past the refusal
            click.echo(f"cannot replay {shown}: {printable(str(error))}", err=True)
            raise SystemExit(ExitCode.NO) from error
        pick.following = error  # the record after the one shown is the first refused
    except OSError as error:
        click.echo(f"cannot read {shown}: {error.strerror or error}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from error
    except ReadError as error:
        if pick.chosen is None:
            click.echo(f"cannot replay {shown}: {printable(str(error))}", err=True)
            raise SystemExit(ExitCode.NO) from error
        if error.code is ReadCode.TORN_LINE:
            pick.following = error  # a crash cut the last line short: the log is unfinished
        else:  # a line that cannot be read stops the replay as a refused record does
            pick.following = ReplayError((error.line or 1) - 1, f"{error.code}: {error.message}")
    except ValueError as error:
        click.echo(f"cannot replay {shown}: {printable(str(error))}", err=True)
        raise SystemExit(ExitCode.NO) from error
    chosen, following, following_lost_to = pick.chosen, pick.following, pick.following_lost_to
    if chosen is None:
        raise click.UsageError(
            f"the log has no record {at_seq}: its last is record {pick.last_seq}"
        )
    state, record, names, lost_to = chosen
    assert record is not None  # every snapshot replay yields holds its record
    refused = isinstance(following, ReplayError) and at_seq is None
    if state is None and record.kind is RecordKind.GENESIS and not as_json:
        click.echo(genesis_text(record))
        click.echo(next_text(following, names, record, following_lost_to))
        raise SystemExit(ExitCode.NO if refused else ExitCode.OK)
    if state is None and isinstance(following, ReplayError):
        # --json describes a table, and the refusal came before the first was dealt.
        click.echo(f"cannot replay {shown}: {printable(str(following))}", err=True)
        raise SystemExit(ExitCode.NO)
    if state is None:
        raise click.UsageError(f"record {record.seq} comes before the first hand")
    if as_json:
        document = replay_document(source, state, names, record, following)
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        click.echo(table_text(state, names, record, lost_to))
        click.echo(next_text(following, names, record, following_lost_to))
    # The log does not replay to its end: what is shown is the last table it reached.
    raise SystemExit(ExitCode.NO if refused else ExitCode.OK)


def _show_genesis(record: Record, as_json: bool) -> None:
    if as_json:
        raise click.UsageError(
            "--at 0 --json: the genesis deals no table yet, and replay --json describes "
            "a table; --at 0 shows the genesis as text"
        )
    click.echo(genesis_text(record))
