"""The browser runtime: the pinned Pyodide release that runs this package's own verifier in a
page (``racing-demon view --engine``, the play page), installed into a cache by
``racing-demon runtime install`` (docs/viewer.md, "The engine page").

Not in the wheel: the runtime is about 13 MB, twenty times the rest of the package, MPL-2.0
code that most users of the command line never need. One command fetches the pinned npm
tarball (or takes one fetched elsewhere), checks its size and SHA-256 before unpacking
anything, and keeps the four files a page needs, with their licence notices, in a cache
folder written beside its final place and renamed into it: a half install is never seen.

``install`` and ``installed`` are the use cases; ``RuntimeRefused`` is every refusal, with
the line the command prints.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import BinaryIO


@dataclass(frozen=True)
class Pin:
    """A release of the runtime: its npm tarball, by size and SHA-256."""

    version: str
    url: str
    size: int
    sha256: str


PINNED = Pin(
    version="314.0.8",
    url="https://registry.npmjs.org/pyodide/-/pyodide-314.0.8.tgz",
    size=6_487_361,
    sha256="9a52704e0ae5b07aaacb8e4fed9f1658e8024694a078695ea45ac79dee4cefcb",
)
# What a page needs of the package: the loader, the Emscripten glue, the interpreter and
# the standard library (no lock file: the page passes an empty one; no wheels).
FILES = ("pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip")
NOTICES = ("THIRD-PARTY.txt", "PYODIDE-MPL-2.0.txt", "CPYTHON-PSF.txt", "EMSCRIPTEN-MIT-NCSA.txt")
MANIFEST = "runtime.json"
_PREFIX = "package/"  # every file of an npm tarball is under package/
_CHUNK = 1 << 16
_DOWNLOAD_SECONDS = 120

INSTALL_COMMAND = "racing-demon runtime install"


class RuntimeRefused(Exception):
    """The runtime cannot be installed or used; the message is the one line that says why."""


@dataclass(frozen=True)
class Runtime:
    """An installed runtime: its folder, release, and each file's SHA-256 as checked."""

    directory: Path
    version: str
    tarball_sha256: str
    files: Mapping[str, str]

    def path(self, name: str) -> Path:
        return self.directory / name

    def read(self, name: str) -> bytes:
        """File ``name``'s bytes, provided they still have the SHA-256 recorded at install:
        what a page inlines or a server serves is what was checked, however long ago
        ``installed`` looked. RuntimeRefused otherwise."""
        path = self.path(name)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise RuntimeRefused(f"cannot read {path}: {error.strerror or error}") from error
        if hashlib.sha256(data).hexdigest() != self.files[name]:
            raise RuntimeRefused(
                f"{path} changed since it was installed: run `{INSTALL_COMMAND}` again"
            )
        return data

    def notices(self) -> list[Path]:
        return [self.directory / "notices" / name for name in NOTICES]


def runtime_dir(environ: Mapping[str, str] | None = None, pin: Pin | None = None) -> Path:
    """Where the runtime lives: ``$RACING_DEMON_RUNTIME_DIR``, else
    ``$XDG_CACHE_HOME/racing-demon/pyodide-VERSION``, else ``~/.cache/...``."""
    env = os.environ if environ is None else environ
    chosen = pin or PINNED
    if env.get("RACING_DEMON_RUNTIME_DIR"):
        return Path(env["RACING_DEMON_RUNTIME_DIR"])
    cache = Path(env["XDG_CACHE_HOME"]) if env.get("XDG_CACHE_HOME") else Path.home() / ".cache"
    return cache / "racing-demon" / f"pyodide-{chosen.version}"


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while piece := stream.read(_CHUNK):
            digest.update(piece)
    return digest.hexdigest()


def installed(directory: Path, pin: Pin | None = None) -> Runtime | None:
    """The runtime in ``directory`` if it is the pinned release and every file still has the
    SHA-256 recorded when it was unpacked from the checked tarball; else None."""
    chosen = pin or PINNED
    try:
        manifest = json.loads((directory / MANIFEST).read_text("utf-8"))
        if manifest.get("version") != chosen.version or manifest.get("tarball") != chosen.sha256:
            return None
        files = manifest["files"]
        if sorted(files) != sorted(FILES):
            return None
        for name in FILES:
            if _sha256_of(directory / name) != files[name]:
                return None
        for notice in NOTICES:
            if not (directory / "notices" / notice).is_file():
                return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return Runtime(directory, chosen.version, chosen.sha256, dict(files))


def required(directory: Path | None = None) -> Runtime:
    """The installed runtime, or RuntimeRefused saying the command that installs it."""
    where = directory or runtime_dir()
    runtime = installed(where)
    if runtime is None:
        raise RuntimeRefused(
            f"the browser runtime (Pyodide {PINNED.version}) is not installed in "
            f"{where}: run `{INSTALL_COMMAND}` first"
        )
    return runtime


# Opens a URL for reading, with a timeout (urllib's, which takes proxies from the
# environment); tests give their own.
Opener = Callable[[str, float], BinaryIO]


def _urlopen(url: str, timeout: float) -> BinaryIO:
    response: BinaryIO = urllib.request.urlopen(url, timeout=timeout)
    return response


@dataclass(frozen=True)
class Installed:
    """What ``install`` did: the runtime, and whether it was there already."""

    runtime: Runtime
    already: bool


def install(
    *,
    source: Path | None = None,
    directory: Path | None = None,
    pin: Pin | None = None,
    opener: Opener = _urlopen,
) -> Installed:
    """Install the pinned runtime into ``directory`` (``runtime_dir()``) from the tarball
    ``source``, or downloaded from the pin's URL; a no-op when it is installed and checks.
    RuntimeRefused, with nothing left behind, when the tarball is not the pinned one or
    cannot be read or written."""
    chosen = pin or PINNED
    target = directory or runtime_dir(pin=chosen)
    present = installed(target, chosen)
    if present is not None:
        return Installed(present, already=True)
    _refuse_a_folder_of_other_files(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError as error:
        raise RuntimeRefused(f"cannot write {target.parent}: {error.strerror or error}") from error
    try:
        tarball = staging / "pyodide.tgz"
        if source is None:
            _download(chosen, tarball, opener)
        else:
            _copy_checked(source, tarball, chosen)
        _check(tarball, chosen, str(source or chosen.url))
        runtime = _unpack(tarball, staging, chosen)
        tarball.unlink()
        _replace(staging, target)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise RuntimeRefused(f"cannot install into {target}: {error.strerror or error}") from error
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Installed(Runtime(target, runtime.version, runtime.tarball_sha256, runtime.files), False)


def _refuse_a_folder_of_other_files(target: Path) -> None:
    """The install replaces ``target`` whole: only a runtime (one that no longer checks: its
    manifest is there) or an empty folder may be replaced, never a folder of someone's files
    that $RACING_DEMON_RUNTIME_DIR happens to name."""
    if not (target.exists() or target.is_symlink()):
        return
    try:
        replaceable = target.is_dir() and (
            (target / MANIFEST).is_file() or next(target.iterdir(), None) is None
        )
    except OSError as error:
        raise RuntimeRefused(f"cannot read {target}: {error.strerror or error}") from error
    if not replaceable:
        raise RuntimeRefused(
            f"{target} exists and holds no runtime ({MANIFEST} is missing): the install "
            "would replace it whole; name an empty or new folder in RACING_DEMON_RUNTIME_DIR"
        )


def _copy_checked(source: Path, tarball: Path, pin: Pin) -> None:
    try:
        with source.open("rb") as stream:
            _copy_capped(stream, tarball, pin, str(source))
    except OSError as error:
        raise RuntimeRefused(f"cannot read {source}: {error.strerror or error}") from error


def _download(pin: Pin, tarball: Path, opener: Opener) -> None:
    try:
        with opener(pin.url, _DOWNLOAD_SECONDS) as stream:
            _copy_capped(stream, tarball, pin, pin.url)
    except OSError as error:  # URLError and timeouts are OSErrors
        reason = getattr(error, "reason", None) or error.strerror or error
        raise RuntimeRefused(
            f"cannot download {pin.url}: {reason}; fetch it elsewhere (`npm pack "
            f"pyodide@{pin.version}`) and run `{INSTALL_COMMAND} --from FILE`"
        ) from error


def _copy_capped(stream: BinaryIO, tarball: Path, pin: Pin, shown: str) -> None:
    """Copy at most one byte more than the pinned size: a larger file is refused without
    reading it all."""
    written = 0
    with tarball.open("wb") as out:
        while written <= pin.size and (piece := stream.read(min(_CHUNK, pin.size + 1 - written))):
            out.write(piece)
            written += len(piece)
    if written != pin.size:
        size = f"more than {pin.size:,}" if written > pin.size else f"{written:,}, not {pin.size:,}"
        raise RuntimeRefused(
            f"{shown} is not the pinned Pyodide {pin.version} tarball: {size} bytes"
        )


def _check(tarball: Path, pin: Pin, shown: str) -> None:
    found = _sha256_of(tarball)
    if found != pin.sha256:
        raise RuntimeRefused(
            f"{shown} is not the pinned Pyodide {pin.version} tarball: SHA-256 {found}, "
            f"not {pin.sha256}"
        )


def _unpack(tarball: Path, staging: Path, pin: Pin) -> Runtime:
    """The four files, by name only (never a path the archive chooses), then the notices
    and the manifest, into ``staging``."""
    files: dict[str, str] = {}
    try:
        with tarfile.open(tarball, "r:gz") as archive:
            for name in FILES:
                member = archive.getmember(_PREFIX + name)
                stream = archive.extractfile(member) if member.isfile() else None
                if stream is None:
                    raise RuntimeRefused(f"the tarball's {_PREFIX + name} is not a file")
                with stream, (staging / name).open("wb") as out:
                    shutil.copyfileobj(stream, out, _CHUNK)
                files[name] = _sha256_of(staging / name)
    except (KeyError, tarfile.TarError) as error:
        raise RuntimeRefused(f"the pinned tarball lacks what a page needs: {error}") from error
    notices = staging / "notices"
    notices.mkdir()
    for notice in NOTICES:
        source = resources.files("racing_demon.runtime").joinpath("notices", notice)
        (notices / notice).write_bytes(source.read_bytes())
    manifest = {"version": pin.version, "tarball": pin.sha256, "url": pin.url, "files": files}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")
    return Runtime(staging, pin.version, pin.sha256, files)


def _replace(staging: Path, target: Path) -> None:
    """Rename ``staging`` to ``target``; a folder already there (a runtime that no longer
    checks) is moved aside first and removed after."""
    if target.exists() or target.is_symlink():
        aside = Path(tempfile.mkdtemp(prefix=f".{target.name}-old-", dir=target.parent))
        os.replace(target, aside / "runtime")
        os.replace(staging, target)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.replace(staging, target)
