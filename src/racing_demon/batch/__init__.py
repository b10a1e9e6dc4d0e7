"""Verify many logs: a folder of them on every core here, or on a Dask cluster.

Every log is verified exactly as ``verify_log`` verifies it alone (docs/log-format.md §7);
this package only decides which logs a command names and where they are verified, and
hands the reports back in the order the logs were named, each as soon as it and every log
before it are done, so a batch's output streams and does not depend on scheduling.
docs/batch-verification.md is the guide. One job per module:

- ``names``: which logs LOG... names (folders, URLs, natural order);
- ``local``: a pool of processes on this machine; ``dask``: a Dask cluster (the only
  module that imports Dask); ``fetch``: reading a log where it is verified;
- ``cache``: resuming a batch, the verdict cache a ``--report`` file keeps;
- ``summary``: the verdicts counted; ``run``: the whole use case, ``run_batch``, that
  ``racing-demon verify`` (or a server) calls with a reporter.
"""

from __future__ import annotations

from racing_demon.batch.cache import (
    VERIFIER_FORMAT,
    ReportCache,
    Resumed,
    ResumeError,
    cache_entry,
    cache_key,
    iter_resumed,
    read_cache,
    reusable,
)
from racing_demon.batch.dask import (
    DASK_EXTRA,
    DEFAULT_SCHEDULER_TIMEOUT,
    ClusterError,
    dask_distributed,
    iter_verified_on_dask,
    verify_on_dask,
)
from racing_demon.batch.fetch import verify_fetched
from racing_demon.batch.local import default_jobs, iter_verified, verify_many, verify_named
from racing_demon.batch.names import (
    LOG_SUFFIX,
    LogName,
    collect_logs,
    collect_names,
    is_url,
    natural_key,
)
from racing_demon.batch.run import (
    BatchEnd,
    BatchReporter,
    BatchRun,
    BatchUsageError,
    run_batch,
)
from racing_demon.batch.summary import Summary

__all__ = [
    "DASK_EXTRA",
    "DEFAULT_SCHEDULER_TIMEOUT",
    "LOG_SUFFIX",
    "VERIFIER_FORMAT",
    "BatchEnd",
    "BatchReporter",
    "BatchRun",
    "BatchUsageError",
    "ClusterError",
    "LogName",
    "ReportCache",
    "ResumeError",
    "Resumed",
    "Summary",
    "cache_entry",
    "cache_key",
    "collect_logs",
    "collect_names",
    "dask_distributed",
    "default_jobs",
    "is_url",
    "iter_resumed",
    "iter_verified",
    "iter_verified_on_dask",
    "natural_key",
    "read_cache",
    "reusable",
    "run_batch",
    "verify_fetched",
    "verify_many",
    "verify_named",
    "verify_on_dask",
]
