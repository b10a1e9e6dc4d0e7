"""``racing-demon runtime``: install or show the pinned browser runtime (Pyodide) that
``view --engine`` inlines; the use cases are ``racing_demon.runtime``'s."""

from __future__ import annotations

from pathlib import Path

import click

from racing_demon.outcomes import ExitCode
from racing_demon.printing import printable
from racing_demon.runtime import (
    FILES,
    PINNED,
    Runtime,
    RuntimeRefused,
    install,
    installed,
    runtime_dir,
)


@click.group(
    short_help="Install or show the browser runtime of view --engine.",
    epilog="""\b
Examples:
  racing-demon runtime install
  npm pack pyodide@314.0.8              # on any machine, then:
  racing-demon runtime install --from pyodide-314.0.8.tgz
  racing-demon runtime show
  RACING_DEMON_RUNTIME_DIR=/opt/rd-runtime racing-demon runtime install
""",
)
def runtime() -> None:
    """The browser runtime: Pyodide 314.0.8 (CPython on WebAssembly, MPL-2.0),
    which lets a page made by `racing-demon view --engine` replay the log with
    this package's own verifier in the reader's browser (racing-demon docs viewer).

    It is not in the package (about 13 MB): `install` puts the pinned release,
    checked by size and SHA-256, with its licence notices, in a cache folder:
    $RACING_DEMON_RUNTIME_DIR, else $XDG_CACHE_HOME/racing-demon/pyodide-314.0.8,
    else ~/.cache/racing-demon/pyodide-314.0.8.
    """


def _describe(runtime: Runtime) -> None:
    click.echo(f"Pyodide {runtime.version} in {printable(str(runtime.directory))}")
    click.echo(f"  tarball sha256 {runtime.tarball_sha256}")
    for name in FILES:
        size = runtime.path(name).stat().st_size
        click.echo(f"  {name:<18} {size:>10,} bytes  sha256 {runtime.files[name]}")
    click.echo(f"  licence notices: {printable(str(runtime.directory / 'notices'))}")


@runtime.command(
    "install",
    short_help="Install the pinned runtime into the cache.",
    epilog="""\b
Examples:
  racing-demon runtime install
  racing-demon runtime install --from pyodide-314.0.8.tgz
""",
)
@click.option(
    "--from",
    "source",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="TARBALL",
    help="The npm tarball already fetched (npm pack pyodide@314.0.8), instead of "
    "downloading it from registry.npmjs.org.",
)
def install_command(source: Path | None) -> None:
    """Install Pyodide 314.0.8 for `view --engine`: download its npm tarball (or
    take TARBALL), check its size and SHA-256 before unpacking anything, and keep
    the four files a page needs and the licence notices in the cache folder.

    Written beside the folder and renamed into place, so a half install is never
    used; nothing is left behind when a check fails. Running it again is a no-op
    when the installed files still check. Exit 0 when installed, 2 when the
    tarball is not the pinned one or cannot be fetched, read or written.
    """
    try:
        done = install(source=source)
    except RuntimeRefused as refusal:
        click.echo(f"racing-demon runtime install: {printable(str(refusal))}", err=True)
        raise SystemExit(ExitCode.UNUSABLE) from refusal
    click.echo("already installed, every file checks:" if done.already else "installed:")
    _describe(done.runtime)


@runtime.command(
    "show",
    short_help="Say whether the runtime is installed, where, and its checksums.",
    epilog="""\b
Examples:
  racing-demon runtime show
""",
)
def show_command() -> None:
    """Say whether the pinned runtime is installed and checks, where it is, and the
    SHA-256 of each of its files. Exit 0 when it is installed, 1 when not."""
    where = runtime_dir()
    found = installed(where)
    if found is None:
        click.echo(
            f"not installed: no Pyodide {PINNED.version} that checks in {printable(str(where))}; "
            "run `racing-demon runtime install`"
        )
        raise SystemExit(ExitCode.NO)
    _describe(found)
