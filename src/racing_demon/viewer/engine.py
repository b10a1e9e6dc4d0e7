"""What a page needs to run this package's own verifier in the browser (RDEngine,
``assets/engine.js``): the Python bundle and, for ``view --engine``, the runtime's files
inlined (docs/viewer.md, "The engine page").

The bundle is the package's own files, read from the installed package, so that a page
always runs the very code that wrote it: the modules that ``verify.in_page`` imports,
followed through the ``racing_demon`` imports in their source (at any depth, lazy ones
too: an unused module costs a few kilobytes, a missing one a page that cannot judge), the
``__init__`` of every package on the way, and the JSON files the verifier reads (the
built-in rule profiles and the schemas).
"""

from __future__ import annotations

import ast
import base64
import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Any

from racing_demon.log.reader import DEFAULT_LIMITS, Limits
from racing_demon.runtime import FILES, NOTICES, PINNED, Runtime

BUNDLE_FORMAT = "racing-demon/engine-bundle/v1"
ENTRY = "racing_demon.verify.in_page"
DATA_FOLDERS = ("profiles", "schemas")
_PACKAGE = "racing_demon"


def _source(module: str) -> tuple[str, Traversable] | None:
    """The path in the bundle and the file of ``module`` (a module or a package's
    ``__init__``), or None when it is not a file of this package."""
    parts = module.split(".")
    root = resources.files(_PACKAGE)
    folder = root.joinpath(*parts[1:])
    if folder.is_dir() and folder.joinpath("__init__.py").is_file():
        return "/".join([*parts, "__init__.py"]), folder.joinpath("__init__.py")
    file = root.joinpath(*parts[1:-1], f"{parts[-1]}.py")
    if file.is_file():
        return "/".join([*parts[:-1], f"{parts[-1]}.py"]), file
    return None


def _imported(module: str, tree: ast.Module) -> Iterator[str]:
    """Every ``racing_demon`` module that ``module``'s source names in an import."""
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                stem = ".".join([*base, node.module] if node.module else base)
            else:
                stem = node.module or ""
            yield stem
            # ``from racing_demon.x import y`` may name a module y.
            yield from (f"{stem}.{alias.name}" for alias in node.names)


def engine_modules(entry: str = ENTRY) -> dict[str, str]:
    """The bundle's Python files, path to text, from ``entry`` through its imports."""
    files: dict[str, str] = {}
    pending = [entry]
    seen: set[str] = set()
    while pending:
        module = pending.pop()
        if module in seen or not (module == _PACKAGE or module.startswith(_PACKAGE + ".")):
            continue
        seen.add(module)
        parts = module.split(".")
        pending.extend(".".join(parts[:end]) for end in range(1, len(parts)))
        found = _source(module)
        if found is None:
            continue
        path, file = found
        text = file.read_text("utf-8")
        files[path] = text
        pending.extend(_imported(module, ast.parse(text, path)))
    return files


def engine_bundle() -> dict[str, Any]:
    """The bundle RDEngine loads: format, and each file's path and text."""
    files = engine_modules()
    root = resources.files(_PACKAGE)
    for folder in DATA_FOLDERS:
        for item in sorted(root.joinpath(folder).iterdir(), key=lambda entry: entry.name):
            if item.name.endswith(".json"):
                files[f"{_PACKAGE}/{folder}/{item.name}"] = item.read_text("utf-8")
    return {"format": BUNDLE_FORMAT, "files": dict(sorted(files.items()))}


@dataclass(frozen=True, kw_only=True)
class EngineOptions:
    """What the page's engine judges with, as ``verify`` was given it for the page's
    own verdict: the pinned rules' digest and the reader's limits."""

    rules: str | None = None
    limits: Limits = DEFAULT_LIMITS


@dataclass(frozen=True, kw_only=True)
class EnginePage:
    """The runtime to inline, its files' bytes, and the options: a page with the engine."""

    runtime: Runtime
    options: EngineOptions
    files: Mapping[str, bytes]  # each of FILES, as checked against the install's SHA-256

    @classmethod
    def of(cls, runtime: Runtime, options: EngineOptions) -> EnginePage:
        """The page's engine, every runtime file read and checked now, before the page is
        written (RuntimeRefused for a file changed since the install): what the page
        inlines is what was checked, and a refusal leaves no half-written page."""
        return cls(runtime=runtime, options=options, files={n: runtime.read(n) for n in FILES})

    def config(self) -> dict[str, Any]:
        """The page's ``rd-engine-config``: the options and what the page inlines, with the
        licence notices it names."""
        return {
            "rules": self.options.rules,
            "limits": dataclasses.asdict(self.options.limits),
            "runtime": {
                "name": "Pyodide",
                "version": PINNED.version,
                "tarball": PINNED.url,
                "tarball_sha256": PINNED.sha256,
                "files": dict(self.runtime.files),
                "licences": "Pyodide: MPL-2.0 (source: https://github.com/pyodide/pyodide/tree/"
                f"{PINNED.version}); CPython: PSF License; Emscripten: MIT or UIUC/NCSA. "
                "The notices are in the page's rd-runtime-notices element.",
            },
        }

    def notices(self) -> str:
        """The licence notices, whole, as the page carries them."""
        return "\n\n".join(path.read_text("utf-8") for path in self.runtime.notices())

    def runtime_parts(self) -> Iterator[tuple[str, Iterator[str]]]:
        """Each runtime file as (name, its base64 in pieces)."""
        for name in FILES:
            yield name, _base64_pieces(self.files[name])


_PIECE = 3 << 18  # a multiple of 3 bytes: the pieces' base64 joins into one


def _base64_pieces(data: bytes) -> Iterator[str]:
    for start in range(0, len(data), _PIECE):
        yield base64.b64encode(data[start : start + _PIECE]).decode("ascii")


__all__ = [
    "BUNDLE_FORMAT",
    "NOTICES",
    "EngineOptions",
    "EnginePage",
    "engine_bundle",
    "engine_modules",
]
