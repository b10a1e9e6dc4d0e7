"""``racing-demon docs``: list the documentation shipped with the package, or print it."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem

from racing_demon import manual


def _complete_topic(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    return [
        CompletionItem(topic.name, help=topic.title)
        for topic in manual.topics()
        if topic.name.startswith(incomplete)
    ]


def _complete_section(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    try:
        topic = manual.find(ctx.params.get("topic") or "")
    except manual.TopicError:
        return []
    if topic.schema:
        return []
    # A numbered section completes as its number, one word that every shell inserts as it
    # is; the title is its help (zsh and fish show it).
    items = [
        CompletionItem(manual.section_number(part.title) or part.title, help=part.title)
        for part in manual.sections(topic.text())
        if part.level > 1
    ]
    return [item for item in items if item.value.startswith(incomplete)]


@click.command(
    short_help="Print the guides and schemas shipped with racing-demon.",
    epilog="""\b
Examples:
  racing-demon docs                       # the topics
  racing-demon docs log-format            # the whole guide
  racing-demon docs log-format 7          # its section "7. Verification"
  racing-demon docs rules "State text"    # a section by its title
  racing-demon docs receipt.schema.json   # a JSON Schema
""",
)
@click.argument("topic", required=False, shell_complete=_complete_topic)
@click.argument("section", required=False, shell_complete=_complete_section)
def docs(topic: str | None, section: str | None) -> None:
    """List the documentation shipped with racing-demon, or print TOPIC.

    TOPIC is a guide (log-format), the README (readme) or a JSON Schema
    (receipt.schema.json); the paths the guides use for each other name them too.
    SECTION prints one section of a guide: its number or its title. On a terminal the
    text goes through the pager ($PAGER), as git help does; otherwise it is printed as
    it is.
    """
    if topic is None:
        click.echo(_listing())
        return
    try:
        found = manual.find(topic)
    except manual.TopicError as error:
        raise click.BadParameter(str(error), param_hint="TOPIC") from error
    try:
        text = found.text() if section is None else manual.section(found, section).text
    except manual.TopicError as error:
        raise click.BadParameter(str(error), param_hint="SECTION") from error
    click.echo_via_pager(text.rstrip("\n"))  # which ends it with one newline


def _listing() -> str:
    """The topics as two definition lists, wrapped to 80 columns as --help is."""
    formatter = click.HelpFormatter(width=80)
    everything = manual.topics()
    for heading, schema in (
        ("Guides (racing-demon docs TOPIC [SECTION])", False),
        ("JSON Schemas (racing-demon docs NAME)", True),
    ):
        with formatter.section(heading):
            rows = [(topic.name, topic.title) for topic in everything if topic.schema is schema]
            formatter.write_dl(rows, col_max=max(len(name) for name, _ in rows))
    return formatter.getvalue().rstrip("\n")
