r"""Executors for batched oracle calls (note 000, Problem 1 and section 10, K4).

An oracle is ``grad_batch(Z, random_state) -> G``: stochastic subgradients at the rows of Z,
drawing its randomness only from ``random_state``. An executor runs one such batch and counts
the complexity measures of §III-A of the paper:

- ``query_depth``: the number of sequential rounds of queries (one per :meth:`grad_batch` call,
  except a call announced by :meth:`continue_round`, which joins the previous round: its
  queries did not depend on the previous batch's answers);
- ``total_queries``: the number of oracle queries (rows);
- ``computational_depth``: sequential steps of the optimizer, reported by the algorithms through
  :meth:`add_depth` (an oracle batch counts 1, a d-vector operation counts 1 here; multiply
  by d for the paper's work/depth in flops).

Rows are split into fixed chunks of ``QUERY_CHUNK``; chunk c gets child c of the batch's
SeedSequence. The answer is therefore the same for any executor and any number of workers.
"""

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from .._random import check_random_state, child_seed_sequences
from .._validation import all_finite, check_int, check_real_array

__all__ = ["QUERY_CHUNK", "QueryStats", "SerialExecutor", "ThreadExecutor"]

#: Rows per oracle chunk (a constant, never derived from the worker count).
QUERY_CHUNK = 4096


@dataclass
class QueryStats:
    """Counters of one run: ``query_depth``, ``total_queries``, ``computational_depth``.

    Parameters
    ----------
    query_depth, total_queries, computational_depth : int, default=0
        Starting values of the counters.
    """

    query_depth: int = 0
    total_queries: int = 0
    computational_depth: int = 0


class SerialExecutor:
    """Runs every chunk of a batch in turn, in the calling thread."""

    def __init__(self):
        self.stats = QueryStats()
        self._join_previous = False

    def _map(self, fn, items):
        return [fn(item) for item in items]

    def grad_batch(self, oracle, Z, random_state=None):
        """``oracle`` on the rows of Z (one unit of query depth); returns G of shape (m, p).

        Parameters
        ----------
        oracle : callable
            ``oracle(Z, random_state) -> G``.
        Z : ndarray of shape (m, d)
            Query points.
        random_state : None, int, SeedSequence or Generator
            Seeds the oracle's chunks.

        Returns
        -------
        ndarray of shape (m, p)
        """
        Z = np.ascontiguousarray(check_real_array(Z, "Z"), dtype=np.float64)
        if Z.ndim != 2:
            raise ValueError(f"Z must be 2-dimensional; got shape {Z.shape}.")
        if not all_finite(Z):
            raise ValueError("Z must contain only finite values; it has NaN or inf.")
        seed = check_random_state(random_state)
        n_chunks = max(1, -(-Z.shape[0] // QUERY_CHUNK))
        seeds = child_seed_sequences(seed, n_chunks)
        parts = self._oracle_parts(oracle, Z, seeds, n_chunks, QUERY_CHUNK)
        if not self._join_previous:
            self.stats.query_depth += 1
            self.stats.computational_depth += 1
        self._join_previous = False
        self.stats.total_queries += Z.shape[0]
        for c, part in enumerate(parts):
            rows = Z[c * QUERY_CHUNK:(c + 1) * QUERY_CHUNK].shape
            if part.shape != rows:
                raise ValueError(f"oracle must return one gradient per query point, an array "
                                 f"of shape {rows} for a chunk of Z of that shape; got shape "
                                 f"{part.shape}.")
        G = np.concatenate(parts, axis=0)
        if not all_finite(G):
            raise ValueError("oracle returned NaN or inf gradients; it must return finite "
                             "values.")
        return G

    def _oracle_parts(self, oracle, Z, seeds, n_chunks, chunk):
        # chunk c of Z with seed c; the DaskExecutor sends the chunks to its workers instead
        return self._map(lambda c: np.asarray(oracle(Z[c * chunk:(c + 1) * chunk], seeds[c]),
                                              dtype=np.float64), range(n_chunks))

    def continue_round(self):
        """The next :meth:`grad_batch` joins the previous round (no new unit of depth).

        Call it only when the next batch's query points were computable before the previous
        batch was answered (e.g. two oracles at the same centre and λ).
        """
        self._join_previous = True

    def add_depth(self, steps):
        """Count ``steps`` sequential optimizer steps.

        Parameters
        ----------
        steps : int
            Number of steps, >= 0.
        """
        self.stats.computational_depth += int(steps)


class ThreadExecutor(SerialExecutor):
    """Runs the chunks of a batch on a thread pool (oracles that release the GIL scale).

    Parameters
    ----------
    n_workers : int, default=2
        Threads of the pool.
    """

    def __init__(self, n_workers=2):
        super().__init__()
        self.n_workers = check_int(n_workers, "n_workers", low=1)

    def _map(self, fn, items):
        with ThreadPoolExecutor(self.n_workers) as pool:
            return list(pool.map(fn, items))
