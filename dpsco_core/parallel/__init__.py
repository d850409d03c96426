"""Executors for batched oracle calls, counting query depth and total queries; row-blocked
executors (in process and on a Dask cluster) for the solvers' batched operations."""

from .blocked import BlockedProblem, BlockExecutor
from .dask_executor import DaskExecutor
from .executors import QUERY_CHUNK, QueryStats, SerialExecutor, ThreadExecutor

__all__ = ["QUERY_CHUNK", "QueryStats", "SerialExecutor", "ThreadExecutor", "BlockExecutor",
           "BlockedProblem", "DaskExecutor"]
