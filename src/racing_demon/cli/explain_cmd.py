"""``racing-demon explain``: what a reason code means, in one sentence."""

from __future__ import annotations

import textwrap

import click

from racing_demon.explanations import FAMILIES, Explanation, close_codes, explain, explanations

_WIDTH = 78  # the text wraps within an 80-column terminal
_SHOWN = 40  # an unknown code is echoed this far: the longest code has 24 characters


class _Catalogue(click.Command):
    """``explain --help`` ends with the listing of every code and its sentence, so the
    help needs no copy of the catalogue that could fall out of date."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        # Wrapped here, not by click, which would break "log-record" at its hyphen.
        formatter.write_paragraph()
        formatter.write(_listing() + "\n")


def _fill(text: str, first: str, rest: str) -> str:
    # break_on_hyphens off: "racing-demon" and "--max-records" stay whole on a line
    return textwrap.fill(
        text, _WIDTH, initial_indent=first, subsequent_indent=rest, break_on_hyphens=False
    )


def _entry(explanation: Explanation) -> str:
    family = explanation.family
    return "\n".join(
        [
            f"{explanation.code}: {family.title}",
            _fill(explanation.sentence, "  ", "  "),
            f"  See {family.command}.",
        ]
    )


def _listing() -> str:
    width = max(len(entry.code) for entry in explanations()) + 2
    blocks = []
    for family in FAMILIES:
        lines = [f"{family.title}", f"(see {family.command}):"]
        lines += [
            _fill(family.sentences[code], f"  {code.value.ljust(width)}", " " * (width + 2))
            for code in family.codes
        ]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


@click.command(
    cls=_Catalogue,
    short_help="Explain a reason code in one sentence, or list every code.",
    epilog="""\b
Examples:
  racing-demon explain TORN_LINE
  racing-demon explain foundation_taken
  racing-demon explain            # every code
""",
)
@click.argument("code", required=False)
def explain_command(code: str | None) -> None:
    """Explain the reason code CODE (any case), as verify, audit, replay, recover and
    tournament print it, in one sentence; without CODE, list every code.

    A name that two families share (FLOAT: a line's number, or a value's type) is
    explained for each. `racing-demon docs reason-codes` lists the same sentences.
    """
    if code is None:
        click.echo(_listing())
        return
    found = explain(code)
    if not found:
        near = close_codes(code)
        hint = (
            f"; did you mean {' or '.join(near)}?"
            if near
            else " (racing-demon explain lists every code)"
        )
        shown = code if len(code) <= _SHOWN else code[:_SHOWN] + "..."
        raise click.BadParameter(f"unknown reason code {shown!r}{hint}", param_hint="CODE")
    click.echo("\n".join(_entry(entry) for entry in found))
