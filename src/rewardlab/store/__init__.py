"""Where results are kept: the result cache and the run store, in one SQLite file, and the
call cache of LLM judges.

    from rewardlab.store import ResultStore, RunStore
    from rewardlab.store.calls import CallCache

`ResultStore` caches finished results by reward spec and sample content (the reward server
and LLM judges read it); `RunStore` records the rows of batch runs so they can resume
(`rewardlab.runner.run`). Both open the same file (`store.sqlite.default_cache_path()`), each with its own
tables. `CallCache` keeps judge endpoints' completions by request (`rewardlab.judges`). Only
the standard library's `sqlite3` is needed.
"""

from rewardlab.core import sample_digest
from rewardlab.store.cache import CacheStats, ResultStore, sample_key
from rewardlab.store.runs import RunInfo, RunStore
from rewardlab.store.sqlite import Database

__all__ = [
    "CacheStats",
    "Database",
    "ResultStore",
    "RunInfo",
    "RunStore",
    "sample_digest",
    "sample_key",
]
