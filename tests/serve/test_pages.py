"""The browser client's pages and files (issue 32: "serve serves it at /: a lobby ... and
a table page to play in. Static files from the package, no build step at install, no
network request beyond the server (strict CSP)"; design §2: "pages (CSP header, unknown
static name 404, /play/not-hex 404, content types)")."""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import tarfile
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from racing_demon import runtime
from racing_demon.serve import pages
from racing_demon.serve.app import make_app
from racing_demon.serve.host import HostedTable
from racing_demon.serve.round_trips import RoundTrips
from racing_demon.viewer.engine import engine_bundle

DESIGN_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
DESIGN_NAMES = {
    "index.html",
    "play.html",
    "lobby.js",
    "play.js",
    "client.js",
    "play-engine.js",
    "engine-worker.js",
    "play.css",
    "check.js",
    "table.js",
    "engine.js",
    "viewer.css",
}
GAME = "0123456789abcdef0123456789abcdef"


class _NoTables:
    tables: Mapping[str, HostedTable] = {}
    stopping_in_ms: int | None = None
    round_trips = RoundTrips()

    def seat_token_ok(self, game: str, seat: int, token: str) -> bool:
        return False


def _files_in(folder: Path) -> Callable[[str], Traversable]:
    """A finder of the listed names in ``folder`` (what the package ships, in a test)."""
    return lambda name: folder / name


@asynccontextmanager
async def _client(
    find: Callable[[str], Traversable] = pages.packaged,
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    # The server's own application: its headers for every answer, and loopback names only.
    app = make_app(_NoTables(), [lambda app: pages.add_routes(app, find)], loopback_only=True)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


def _run(test: Callable[[], Coroutine[Any, Any, None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


@pytest.fixture
def site(tmp_path: Path) -> Path:
    for name, body in {
        "index.html": b"<!doctype html><title>lobby</title>",
        "play.html": b"<!doctype html><title>table</title>",
        "lobby.js": b'const RDLobby = (() => { "use strict"; return {}; })();',
        "viewer.css": b"body { margin: 0 }",
    }.items():
        (tmp_path / name).write_bytes(body)
    return tmp_path


def test_the_lobby_and_the_table_page_are_served_with_the_designed_headers(site: Path) -> None:
    """Design §2: "GET / -> index.html, GET /play/{game} -> play.html" with "Content-Security-
    Policy: default-src 'none'; script-src 'self'; ...", "X-Content-Type-Options: nosniff,
    Referrer-Policy: no-referrer, Cache-Control: no-cache"."""

    async def test() -> None:
        async with _client(_files_in(site)) as client:
            for path, name in (("/", "index.html"), (f"/play/{GAME}", "play.html")):
                response = await client.get(path)
                assert response.status == 200
                assert await response.read() == (site / name).read_bytes()
                assert response.headers["Content-Type"] == "text/html; charset=utf-8"
                assert response.headers["Content-Security-Policy"] == DESIGN_CSP
                assert response.headers["X-Content-Type-Options"] == "nosniff"
                assert response.headers["Referrer-Policy"] == "no-referrer"
                assert response.headers["Cache-Control"] == "no-cache"

    _run(test)


def test_a_game_that_is_not_32_lowercase_hex_has_no_table_page(site: Path) -> None:
    """Design §2: "game id checked: 32 lowercase hex, else 404"."""

    async def test() -> None:
        async with _client(_files_in(site)) as client:
            for game in ("not-hex", GAME.upper(), GAME[:-1], GAME + "0", f"{GAME[:-1]}g"):
                response = await client.get(f"/play/{game}")
                assert response.status == 404, game
                assert response.headers["Content-Security-Policy"] == DESIGN_CSP

    _run(test)


def test_static_files_come_from_a_fixed_list_of_names_with_their_types(site: Path) -> None:
    """Design §2: "GET /static/{name} -> a fixed table of names -> (package file, content
    type); nothing else is served, no path from the request touches the filesystem"; a
    listed file that is absent answers 404 (brief: "rather than crash")."""
    (site / "secret.txt").write_text("not listed")

    async def test() -> None:
        async with _client(_files_in(site)) as client:
            response = await client.get("/static/lobby.js")
            assert response.status == 200
            assert response.headers["Content-Type"] == "text/javascript; charset=utf-8"
            assert response.headers["Content-Security-Policy"] == DESIGN_CSP
            response = await client.get("/static/viewer.css")
            assert response.headers["Content-Type"] == "text/css; charset=utf-8"
            for name in (
                "secret.txt",  # in the folder, not in the list
                "play.js",  # in the list, not in the folder
                "..%2Fsecret.txt",
                "%2E%2E%2Fsecret.txt",
                "view.js",
                "",
            ):
                response = await client.get(f"/static/{name}")
                assert response.status == 404, name
            response = await client.get("/static/../static/secret.txt")
            assert response.status == 404

    _run(test)


def test_the_list_is_the_designs_and_each_file_is_package_data() -> None:
    """Design §0/§2: the page's scripts and styles by name; "Static files from
    importlib.resources (package data: make sure pip install . ships them)". Each listed
    file that is in the source tree is read through importlib.resources, and
    pyproject.toml ships both folders."""
    import tomllib

    assert set(pages.STATIC) == DESIGN_NAMES
    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = pyproject["tool"]["setuptools"]["package-data"]["racing_demon"]
    assert {"serve/static/*", "viewer/assets/*"} <= set(shipped)
    for name, (package, folder, _) in pages.STATIC.items():
        source = root / "src" / package.replace(".", "/") / folder / name
        if source.exists():
            assert pages.packaged(name).read_bytes() == source.read_bytes()
    assert resources.files("racing_demon.viewer").joinpath("assets", "check.js").is_file()


def test_the_packaged_viewer_files_are_served_as_they_are() -> None:
    """The one renderer and the viewer's checks come from the viewer's own assets."""

    async def test() -> None:
        async with _client() as client:
            response = await client.get("/static/check.js")
            assert response.status == 200
            assert response.headers["Content-Type"] == "text/javascript; charset=utf-8"
            assert await response.read() == pages.packaged("check.js").read_bytes()

    _run(test)


def test_another_host_name_is_refused_on_a_loopback_server(site: Path) -> None:
    """docs/protocol.md §9: a request naming another host (DNS rebinding) is refused: the
    pages too, which would otherwise give another site's page the server's origin."""

    async def test() -> None:
        async with _client(_files_in(site)) as client:
            response = await client.get("/", headers={"Host": "attacker.example:80"})
            assert response.status == 403

    _run(test)


# -- the engine's files (issue 34, point 4) -------------------------------------------------

ENGINE_CSP = DESIGN_CSP.replace("script-src 'self';", "script-src 'self' 'wasm-unsafe-eval';")


@pytest.fixture
def engine(tmp_path: Path) -> pages.Engine:
    """An installed runtime's four files (their bytes do not matter to the routes) and a
    bundle."""
    runtime = {name: f"the bytes of {name}".encode() * 100 for name in pages.RUNTIME_FILES}
    return pages.Engine("314.0.8", runtime, b'{"format": "racing-demon/engine-bundle/v1"}')


@asynccontextmanager
async def _engine_client(
    site: Path, engine: pages.Engine | None
) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = make_app(
        _NoTables(),
        [lambda app: pages.add_routes(app, _files_in(site), engine)],
        loopback_only=True,
    )
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        yield client


def test_the_engine_files_are_served_by_name_with_their_types(
    site: Path, engine: pages.Engine
) -> None:
    """Issue 34 task: "serve serves the installed runtime and the Python bundle under
    /engine/... (fixed file list, right content types, application/wasm for the wasm, cache
    headers)": each file as installed, and a browser that holds it already gets a 304."""

    async def test() -> None:
        async with _engine_client(site, engine) as client:
            types = {
                "pyodide.mjs": "text/javascript",
                "pyodide.asm.mjs": "text/javascript",
                "pyodide.asm.wasm": "application/wasm",
                "python_stdlib.zip": "application/zip",
            }
            for name, kind in types.items():
                response = await client.get(f"/engine/{name}")
                assert response.status == 200, name
                assert await response.read() == engine.runtime[name]
                assert response.headers["Content-Type"] == kind
                assert response.headers["Cache-Control"] == "no-cache"
                assert response.headers["X-Content-Type-Options"] == "nosniff"
                again = await client.get(
                    f"/engine/{name}", headers={"If-None-Match": response.headers["ETag"]}
                )
                assert again.status == 304, name
            for name, body in (
                ("bundle.json", engine.bundle),
                ("engine.json", engine.manifest()),
            ):
                response = await client.get(f"/engine/{name}")
                assert response.status == 200
                assert await response.read() == body
                assert response.headers["Content-Type"] == "application/json; charset=utf-8"
                assert response.headers["Cache-Control"] == "no-cache"
                again = await client.get(
                    f"/engine/{name}", headers={"If-None-Match": response.headers["ETag"]}
                )
                assert again.status == 304
                assert await again.read() == b""
            manifest = json.loads(engine.manifest())
            assert manifest["pyodide"] == "314.0.8"
            assert set(manifest["files"]) == {*types, "bundle.json"}
            for name in ("runtime.json", "pyodide.js", "pyodide-lock.json", "..%2Fruntime.json"):
                response = await client.get(f"/engine/{name}")
                assert response.status == 404, name

    _run(test)


def test_with_the_engine_only_the_table_page_and_its_worker_may_compile_webassembly(
    site: Path, engine: pages.Engine
) -> None:
    """Issue 34 task: "CSP of the play page extended only by what Pyodide needs, e.g.
    'wasm-unsafe-eval'": the table page and the engine's worker script (a worker runs under
    its own script's policy) add exactly that; every other answer keeps the strict one."""
    (site / "engine-worker.js").write_text("const RDEngineWorker = 1;")

    async def test() -> None:
        async with _engine_client(site, engine) as client:
            for path in (f"/play/{GAME}", "/static/engine-worker.js"):
                response = await client.get(path)
                assert response.status == 200, path
                assert response.headers["Content-Security-Policy"] == ENGINE_CSP
            for path in ("/", "/static/lobby.js", "/engine/engine.json"):
                response = await client.get(path)
                assert response.headers["Content-Security-Policy"] == DESIGN_CSP, path
        assert pages.ENGINE_CSP == ENGINE_CSP

    _run(test)


def test_without_the_runtime_there_is_no_engine_and_no_wider_policy(site: Path) -> None:
    """Issue 34 task: "nothing when the runtime is not installed": /engine/ is 404 (the
    page then says the engine is not available here) and no policy allows WebAssembly."""
    (site / "engine-worker.js").write_text("const RDEngineWorker = 1;")

    async def test() -> None:
        async with _engine_client(site, None) as client:
            for name in ("engine.json", "bundle.json", "pyodide.asm.wasm", "pyodide.mjs"):
                response = await client.get(f"/engine/{name}")
                assert response.status == 404, name
            for path in (f"/play/{GAME}", "/static/engine-worker.js"):
                response = await client.get(path)
                assert response.headers["Content-Security-Policy"] == DESIGN_CSP, path

    _run(test)


def _npm_tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_the_engine_is_the_checked_runtime_and_the_packages_own_bundle(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34 task: "serve serves the installed runtime and the Python bundle ... nothing
    when the runtime is not installed": the files ``racing-demon runtime install`` checked
    and kept (RDEngine's four), the bundle ``view --engine`` inlines, and no engine when a
    file no longer checks."""
    folder = tmp_path / "runtime"
    assert pages.installed_engine(folder) is None
    assert "racing-demon runtime install" in pages.engine_words(None)
    assert set(pages.RUNTIME_FILES) == set(runtime.FILES)
    contents = {name: f"the bytes of {name}".encode() * 10 for name in runtime.FILES}
    data = _npm_tarball(contents)
    digest = hashlib.sha256(data).hexdigest()
    pin = runtime.Pin("314.0.8", "https://registry.invalid/pyodide.tgz", len(data), digest)
    monkeypatch.setattr(runtime, "PINNED", pin)
    (tmp_path / "pyodide.tgz").write_bytes(data)
    runtime.install(source=tmp_path / "pyodide.tgz", directory=folder, pin=pin)

    engine = pages.installed_engine(folder)
    assert engine is not None
    assert engine.version == "314.0.8"
    assert dict(engine.runtime) == contents
    assert json.loads(engine.bundle) == engine_bundle()
    assert "Pyodide 314.0.8" in pages.engine_words(engine)
    (folder / "pyodide.asm.wasm").write_bytes(b"another interpreter")
    assert pages.installed_engine(folder) is None

    async def served_while_the_cache_changes() -> None:
        """A review found the files read from the cache at each request: a file changed
        after the start would have been served unchecked. Now the checked bytes are."""
        async with _engine_client(site, engine) as client:
            response = await client.get("/engine/pyodide.asm.wasm")
            assert await response.read() == contents["pyodide.asm.wasm"]
            assert (
                response.headers["ETag"]
                == f'"{hashlib.sha256(contents["pyodide.asm.wasm"]).hexdigest()}"'
            )

    asyncio.run(asyncio.wait_for(served_while_the_cache_changes(), 30))
