"""The version of racing-demon this process runs: a cached verdict and a Dask worker's
must be of the same."""

from __future__ import annotations

import functools
import importlib.metadata


@functools.cache
def package_version() -> str:
    return importlib.metadata.version("racing-demon")
