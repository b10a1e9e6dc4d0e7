"""A server of the data folder, index, lobby and archive alone, on 127.0.0.1 through
aiohttp's test server, for the tests of those parts."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from racing_demon.log.keys import save_key_pair
from racing_demon.serve import archive, lobby
from racing_demon.serve.context import ServerContext, ServeSettings
from racing_demon.serve.data import DataFolder
from racing_demon.serve.index import Index
from racing_demon.serve.journal import Journal


def context_in(
    root: Path,
    settings: ServeSettings | None = None,
    *,
    signing_key: Ed25519PrivateKey | None = None,
) -> ServerContext:
    """A context of the data folder at ``root`` (made if new), whose table key is
    ``signing_key`` (given as --signing-key is) or the folder's own."""
    folder = DataFolder.open(root)
    key_file = None
    if signing_key is not None:
        key_file = root.parent / f"{root.name}-signing.key"
        if not key_file.exists():
            save_key_pair(signing_key, root.parent, key_file.name)
    return ServerContext(
        folder=folder,
        index=Index.open(folder.index_path),
        journal=Journal(folder),
        table_key=folder.table_key(key_file),
        archive=archive.archive_game,
        settings=settings,
    )


@asynccontextmanager
async def served(context: ServerContext) -> AsyncIterator[TestClient[web.Request, web.Application]]:
    app = web.Application()
    lobby.add_routes(app, context)
    archive.add_routes(app, context)
    async with TestClient(TestServer(app, host="127.0.0.1")) as client:
        try:
            yield client
        finally:
            await context.stop()
