"""Verify many logs on a Dask cluster: the only module that imports Dask (lazily, so that
the rest of the package runs without the extra).

Handing work over costs a network round trip, so the logs' names travel in chunks that
shrink as the work runs out (a "guided" schedule): each is a share of what remains, so the
first are large and the last hold one log, and no worker waits long at the end for another
to finish a big chunk. Each worker reads the logs it verifies (``verify_fetched``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Generator, Iterator, Sequence
from types import ModuleType
from typing import Any, TypeVar

from racing_demon.batch import version
from racing_demon.batch.fetch import verify_on_worker
from racing_demon.batch.local import in_order
from racing_demon.batch.names import LogName
from racing_demon.errors import RacingDemonError
from racing_demon.verify import Report, Settings

DASK_EXTRA = "pip install 'racing-demon[dask]'"
# How long to wait for a Dask scheduler before saying it cannot be reached (--scheduler-timeout).
DEFAULT_SCHEDULER_TIMEOUT = 30.0

_Item = TypeVar("_Item")
_Done = TypeVar("_Done")
# A Dask chunk is at most this share of the logs left per worker, and this many logs.
_SHARE_PER_WORKER = 4
_MAX_CHUNK_LOGS = 32


class ClusterError(RacingDemonError):
    """Verification on a Dask cluster cannot run: the extra is missing, the scheduler is
    out of reach, or a worker runs another version of racing-demon."""


def dask_distributed() -> ModuleType:
    """``dask.distributed``'s package, or ClusterError naming the extra to install."""
    try:
        import distributed
    except ImportError as error:
        raise ClusterError(f"Dask is not installed: {DASK_EXTRA}") from error
    return distributed


def verify_on_dask(
    logs: Sequence[LogName],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> list[Report]:
    """``iter_verified_on_dask``'s reports, as a list."""
    with contextlib.closing(iter_verified_on_dask(logs, settings, scheduler, timeout)) as reports:
        return list(reports)


def iter_verified_on_dask(
    logs: Sequence[LogName],
    settings: Settings,
    scheduler: str,
    timeout: float = DEFAULT_SCHEDULER_TIMEOUT,
) -> Generator[Report, None, None]:
    """``iter_verified``'s reports, verified by the workers of the Dask cluster whose
    scheduler is at ``scheduler`` (``tcp://host:8786``).

    This process sends the logs' names; each worker reads the logs it verifies itself
    (``verify_fetched``), so every worker must reach them under those names: a path on a
    file system they share, or a URL (``s3://``, ``https://``...) that fsspec opens
    there. A log a worker cannot read is UNREADABLE, as here. The workers need
    racing-demon of the same version (a task checks). At most two chunks per worker
    thread are in flight. A scheduler not reached within ``timeout`` seconds is a
    ClusterError that says so.
    """
    work = functools.partial(verify_on_worker, settings=settings)
    for report, _ in on_dask(work, [(name, None) for name in logs], scheduler, timeout):
        assert report is not None  # nothing was known, so everything was verified
        yield report


def on_dask(
    work: Callable[[_Item], _Done], items: Sequence[_Item], scheduler: str, timeout: float
) -> Generator[_Done, None, None]:
    distributed = dask_distributed()
    try:
        client = distributed.Client(scheduler, timeout=timeout, set_as_default=False)
    except OSError as error:
        # Dask retries a refused connection until the timeout, then says so at length.
        raise ClusterError(
            f"cannot reach the Dask scheduler at {scheduler} within {timeout:g} s "
            "(--scheduler-timeout)"
        ) from error
    except ValueError as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {scheduler}: {error}") from error
    with client:
        threads = max(1, sum(client.nthreads().values()))
        yield from in_order(_completed_on_dask(client, distributed, work, items, threads))


def _completed_on_dask(
    client: Any,
    distributed: ModuleType,
    work: Callable[[_Item], _Done],
    items: Sequence[_Item],
    threads: int,
) -> Iterator[tuple[int, _Done]]:
    chunks = _chunks(len(items), threads)
    running = distributed.as_completed(loop=client.loop)
    indices: dict[Any, range] = {}
    client_version = version.package_version()

    def send_more() -> None:
        while len(indices) < 2 * threads and (chunk := next(chunks, None)) is not None:
            batch = [items[index] for index in chunk]
            future = client.submit(_run_chunk, work, batch, client_version, pure=False)
            indices[future] = chunk
            running.add(future)

    send_more()
    for future in running:
        yield from zip(indices.pop(future), future.result(), strict=True)
        send_more()


def _chunk_size(left: int, workers: int) -> int:
    """The next chunk's number of logs, when ``left`` logs are left to hand out."""
    return max(1, min(_MAX_CHUNK_LOGS, left // (workers * _SHARE_PER_WORKER)))


def _chunks(total: int, workers: int) -> Iterator[range]:
    """The indices of each chunk, in order: ever smaller as fewer logs are left."""
    start = 0
    while start < total:
        size = _chunk_size(total - start, workers)
        yield range(start, min(total, start + size))
        start += size


def _run_chunk(
    work: Callable[[_Item], _Done], items: list[_Item], client_version: str
) -> list[_Done]:
    """On a worker: ``work`` of each item, refusing to if versions differ."""
    here = version.package_version()
    if here != client_version:
        raise ClusterError(
            f"a Dask worker runs racing-demon {here} and the client {client_version}: "
            "install the same version on every worker, or verdicts could differ"
        )
    return [work(item) for item in items]
