"""The browser client's pages and their files (docs/protocol.md §12): ``GET /`` the lobby,
``GET /play/GAME`` the table page, ``GET /static/NAME`` a script or style sheet.

Only the names of ``STATIC`` are served, each from the package's data (``importlib
.resources``, so an installed wheel serves them): no part of a request ever names a
file. A listed file the package lacks is 404. Every answer carries ``PAGE_HEADERS``: a
policy that runs the server's own scripts and styles only and talks to the server only,
and ``no-cache``, so that a browser asks again and an upgraded server's scripts are used
at once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final

from aiohttp import web

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS: Final[Mapping[str, str]] = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}
_HTML: Final = "text/html"
_JS: Final = "text/javascript"
_CSS: Final = "text/css"
_SERVE: Final = "racing_demon.serve"  # static/: the pages and the client's own scripts
_VIEWER: Final = "racing_demon.viewer"  # assets/: what the view page shares with them

# Each name a page may ask for: the package and folder that hold it, and its type.
STATIC: Final[Mapping[str, tuple[str, str, str]]] = {
    "index.html": (_SERVE, "static", _HTML),
    "play.html": (_SERVE, "static", _HTML),
    "lobby.js": (_SERVE, "static", _JS),
    "play.js": (_SERVE, "static", _JS),
    "client.js": (_SERVE, "static", _JS),
    "play.css": (_SERVE, "static", _CSS),
    "check.js": (_VIEWER, "assets", _JS),
    "table.js": (_VIEWER, "assets", _JS),
    "viewer.css": (_VIEWER, "assets", _CSS),
}
_GAME: Final = re.compile(r"[0-9a-f]{32}")

# Where a name's file is found: the package's data, unless a test gives its own.
Finder = Callable[[str], Traversable]


def packaged(name: str) -> Traversable:
    """The package's file for the listed ``name``."""
    package, folder, _ = STATIC[name]
    return resources.files(package).joinpath(folder, name)


def add_routes(app: web.Application, find: Finder = packaged) -> None:
    """Add the pages' routes to ``app``, their files found by ``find``."""
    pages = _Pages(find)
    app.router.add_get("/", pages.lobby)
    app.router.add_get("/play/{game}", pages.table)
    app.router.add_get("/static/{name}", pages.static)


class _Pages:
    def __init__(self, find: Finder) -> None:
        self._find = find

    async def lobby(self, request: web.Request) -> web.Response:
        return self._file("index.html")

    async def table(self, request: web.Request) -> web.Response:
        if not _GAME.fullmatch(request.match_info["game"]):
            return _not_found("a game id is 32 lowercase hex digits")
        return self._file("play.html")

    async def static(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in STATIC:
            return _not_found("no such file")
        return self._file(name)

    def _file(self, name: str) -> web.Response:
        try:
            # A few kilobytes from the package: read at once, a fresh copy every time.
            body = self._find(name).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return _not_found(f"{name} is not installed")
        return web.Response(
            body=body, content_type=STATIC[name][2], charset="utf-8", headers=PAGE_HEADERS
        )


def _not_found(why: str) -> web.Response:
    return web.Response(status=404, text=why, headers=PAGE_HEADERS)
