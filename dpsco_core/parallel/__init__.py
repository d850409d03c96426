"""Executors for batched oracle calls, counting query depth and total queries."""

from .executors import QUERY_CHUNK, QueryStats, SerialExecutor, ThreadExecutor

__all__ = ["QUERY_CHUNK", "QueryStats", "SerialExecutor", "ThreadExecutor"]
