"""The browser client's pages and their files (docs/protocol.md §12): ``GET /`` the lobby,
``GET /play/GAME`` the table page, ``GET /static/NAME`` a script or style sheet, and, when
the browser runtime is installed, ``GET /engine/NAME`` the files of the rules engine the
table page runs (Pyodide and this package's Python files: issue 34).

Only the names of ``STATIC`` and ``ENGINE_FILES`` are served, each from the package's data
(``importlib.resources``, so an installed wheel serves them) or from the runtime checked
when the server started: no part of a request ever names a file. A listed file the package
lacks is 404. Every answer carries ``PAGE_HEADERS``: a policy that runs the server's own
scripts and styles only and talks to the server only, and ``no-cache``, so that a browser
asks again and an upgraded server's scripts are used at once (an engine file answers 304
to a browser that holds it already). With the engine, the table page's policy also lets
it compile WebAssembly (``'wasm-unsafe-eval'``), which Pyodide's interpreter is; nothing
else is added, and without the engine nothing is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final

from aiohttp import web

from racing_demon import runtime
from racing_demon.viewer.engine import engine_bundle

_POLICY: Final = (
    "default-src 'none'; script-src 'self'{wasm}; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
CSP: Final = _POLICY.format(wasm="")
# The table page with the engine: its interpreter is WebAssembly, which a policy without
# 'wasm-unsafe-eval' forbids compiling; no other source or scheme is added.
ENGINE_CSP: Final = _POLICY.format(wasm=" 'wasm-unsafe-eval'")
PAGE_HEADERS: Final[Mapping[str, str]] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
ENGINE_PAGE_HEADERS: Final[Mapping[str, str]] = {
    **PAGE_HEADERS,
    "Content-Security-Policy": ENGINE_CSP,
}
_HTML: Final = "text/html"
_JS: Final = "text/javascript"
_CSS: Final = "text/css"
_JSON: Final = "application/json"
_SERVE: Final = "racing_demon.serve"  # static/: the pages and the client's own scripts
_VIEWER: Final = "racing_demon.viewer"  # assets/: what the view page shares with them

# Each name a page may ask for: the package and folder that hold it, and its type.
STATIC: Final[Mapping[str, tuple[str, str, str]]] = {
    "index.html": (_SERVE, "static", _HTML),
    "play.html": (_SERVE, "static", _HTML),
    "lobby.js": (_SERVE, "static", _JS),
    "play.js": (_SERVE, "static", _JS),
    "client.js": (_SERVE, "static", _JS),
    "play-engine.js": (_SERVE, "static", _JS),
    "engine-worker.js": (_SERVE, "static", _JS),
    "play.css": (_SERVE, "static", _CSS),
    "check.js": (_VIEWER, "assets", _JS),
    "table.js": (_VIEWER, "assets", _JS),
    "engine.js": (_VIEWER, "assets", _JS),
    "viewer.css": (_VIEWER, "assets", _CSS),
}
# The engine's worker runs under its own script's policy, which is the table page's.
_WORKER: Final = "engine-worker.js"
_GAME: Final = re.compile(r"[0-9a-f]{32}")
# The engine's files by name, each with its type (application/wasm: what a browser needs
# to compile the interpreter while it streams in). ENGINE_MANIFEST says the engine is here.
RUNTIME_FILES: Final[Mapping[str, str]] = {
    "pyodide.mjs": _JS,
    "pyodide.asm.mjs": _JS,
    "pyodide.asm.wasm": "application/wasm",
    "python_stdlib.zip": "application/zip",
}
ENGINE_BUNDLE: Final = "bundle.json"
ENGINE_MANIFEST: Final = "engine.json"

# Where a name's file is found: the package's data, unless a test gives its own.
Finder = Callable[[str], Traversable]


@dataclass(frozen=True, slots=True)
class Engine:
    """What ``/engine/`` serves: the installed runtime's files (read as the server started
    and checked against the SHA-256 recorded at install) and the package's own Python
    files that the page's engine runs, as one JSON bundle."""

    version: str  # the runtime's release, which the manifest names
    runtime: Mapping[str, bytes]  # each of RUNTIME_FILES: the bytes that were checked
    bundle: bytes

    def manifest(self) -> bytes:
        """``engine.json``: the release, and each file's URL under ``/engine/``."""
        files = {name: f"/engine/{name}" for name in (*RUNTIME_FILES, ENGINE_BUNDLE)}
        return json.dumps({"pyodide": self.version, "files": files}, sort_keys=True).encode()


def installed_engine(directory: Path | None = None) -> Engine | None:
    """The engine the table page may run: the runtime installed in ``directory`` (by
    default the cache ``racing-demon runtime install`` fills) if every file still checks,
    with this package's Python bundle; None when it is not installed."""
    found = runtime.installed(directory or runtime.runtime_dir())
    if found is None:
        return None
    # Held in memory (about 13 MB), the very bytes checked: a file of the cache changed
    # while the server runs is never served.
    try:
        files = {name: found.read(name) for name in RUNTIME_FILES}
    except runtime.RuntimeRefused:
        return None
    bundle = json.dumps(engine_bundle(), ensure_ascii=False, sort_keys=True).encode()
    return Engine(found.version, files, bundle)


def engine_words(engine: Engine | None) -> str:
    """What ``serve`` says at its start about the table page's engine."""
    if engine is None:
        return (
            "the table page has no rules engine (the moves are checked by the server only): "
            f"`{runtime.INSTALL_COMMAND}` installs it, then start serve again"
        )
    return f"the table page checks the moves with its rules engine (Pyodide {engine.version})"


def packaged(name: str) -> Traversable:
    """The package's file for the listed ``name``."""
    package, folder, _ = STATIC[name]
    return resources.files(package).joinpath(folder, name)


def add_routes(app: web.Application, find: Finder = packaged, engine: Engine | None = None) -> None:
    """Add the pages' routes to ``app``, their files found by ``find``; and the engine's,
    when there is one (else ``/engine/`` is 404 and the table page says so)."""
    pages = _Pages(find, engine)
    app.router.add_get("/", pages.lobby)
    app.router.add_get("/play/{game}", pages.table)
    app.router.add_get("/static/{name}", pages.static)
    if engine is not None:
        app.router.add_get("/engine/{name}", _EngineFiles(engine).file)


class _Pages:
    def __init__(self, find: Finder, engine: Engine | None) -> None:
        self._find = find
        self._table_headers = PAGE_HEADERS if engine is None else ENGINE_PAGE_HEADERS

    async def lobby(self, request: web.Request) -> web.Response:
        return self._file("index.html")

    async def table(self, request: web.Request) -> web.Response:
        if not _GAME.fullmatch(request.match_info["game"]):
            return _not_found("a game id is 32 lowercase hex digits")
        return self._file("play.html", self._table_headers)

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            return _not_found("no such file")
        return self._file(name, self._table_headers if name == _WORKER else PAGE_HEADERS)

    def _file(self, name: str, headers: Mapping[str, str] = PAGE_HEADERS) -> web.Response:
        try:
            # A few kilobytes from the package: read at once, a fresh copy every time.
            body = self._find(name).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return _not_found(f"{name} is not installed")
        return web.Response(
            body=body, content_type=STATIC[name][2], charset="utf-8", headers=headers
        )


class _EngineFiles:
    def __init__(self, engine: Engine) -> None:
        # Built once: the bundle is the running package's code, the manifest its summary,
        # the runtime's files the bytes checked as the server started.
        self._files = {
            ENGINE_BUNDLE: (_Built(engine.bundle), _JSON),
            ENGINE_MANIFEST: (_Built(engine.manifest()), _JSON),
            **{name: (_Built(data), RUNTIME_FILES[name]) for name, data in engine.runtime.items()},
        }

    async def file(self, request: web.Request) -> web.StreamResponse:
        found = self._files.get(request.match_info["name"])
        if found is None:
            return _not_found("no such file")
        built, content_type = found
        headers = {**PAGE_HEADERS, "ETag": f'"{built.etag}"'}
        # A browser that holds the file already (megabytes, for the runtime) gets a 304.
        if built.etag in {tag.value for tag in request.if_none_match or ()}:
            return web.Response(status=304, headers=headers)
        charset = "utf-8" if content_type == _JSON else None
        return web.Response(
            body=built.body, content_type=content_type, charset=charset, headers=headers
        )


class _Built:
    """A file made in memory, with its SHA-256 as its validator."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.etag = hashlib.sha256(body).hexdigest()


def _not_found(why: str) -> web.Response:
    return web.Response(status=404, text=why, headers=PAGE_HEADERS)
