"""The streaming tree mechanism: note 003 oracles 12-17 and the sensitivity of the release."""

import numpy as np
import pytest

from dpsco_core.privacy import (GdpAccountant, NeighboringRelation, RdpAccountant,
                                SingleEpochTreeAggregationDpEvent, gdp_epsilon)
from dpsco_core.tree import (TreeAggregation, leaf_multiplicity, node_interval, prefix_nodes,
                             prefix_noise_variance, tree_aggregation, tree_nodes)


def _incidence(steps):
    nodes = tree_nodes(steps)
    A = np.zeros((len(nodes), steps), dtype=int)
    for r, (k, j) in enumerate(nodes):
        lo, hi = node_interval(k, j)
        A[r, lo - 1:hi] = 1
    return nodes, A


@pytest.mark.parametrize("steps", [1, 2, 7, 8, 13, 100])
def test_oracle12_node_set(steps):
    nodes = tree_nodes(steps)
    assert len(nodes) == steps                             # one node per step
    expected = {(k, j) for k in range(steps.bit_length()) for j in range(1, steps + 1, 2)
                if j * 2 ** k <= steps}
    assert set(nodes) == expected
    for s, (k, j) in enumerate(nodes, start=1):
        assert j % 2 == 1 and j * 2 ** k == s              # completes at step s
    tree = TreeAggregation(2, steps, noise_scale=1.0, random_state=0)
    assert tree._state.shape[0] == steps.bit_length()      # live vectors


@pytest.mark.parametrize("s", list(range(1, 70)))
def test_oracle13_decomposition_tiles_prefix(s):
    cover = np.zeros(s + 5, dtype=int)
    for k, j in prefix_nodes(s):
        assert j % 2 == 1
        lo, hi = node_interval(k, j)
        cover[lo:hi + 1] += 1
    assert cover[1:s + 1].tolist() == [1] * s and cover[s + 1:].sum() == 0 and cover[0] == 0
    assert len(prefix_nodes(s)) == bin(s).count("1")


def test_oracle13_paper_example():
    assert sorted(prefix_nodes(7), reverse=True) == [(2, 1), (1, 3), (0, 7)]


@pytest.mark.parametrize("steps,expected", [(1, 1), (7, 3), (8, 4), (100, 7), (1000, 10)])
def test_oracle14_leaf_multiplicity(steps, expected):
    _, A = _incidence(steps)
    assert A.sum(axis=0).max() == expected == leaf_multiplicity(steps) == steps.bit_length()
    assert A[:, 0].sum() == expected                       # leaf 1 attains it


def test_oracle14_every_leaf_in_one_node_per_level_at_most():
    nodes, A = _incidence(300)
    levels = np.array([k for k, _ in nodes])
    for leaf in range(300):
        ks = levels[A[:, leaf] == 1]
        assert len(ks) == len(set(ks))


def test_sensitivity_of_the_whole_release():
    # Changing leaf i by v changes the node vector by v in each node holding i: l2 change
    # ||v|| sqrt(#nodes) <= ||v|| sqrt(bit_length(T)); equality for leaf 1.
    T = 11
    _, A = _incidence(T)
    v = np.array([0.6, -0.8])
    for leaf in range(T):
        stream = np.zeros((T, 2))
        stream[leaf] = v
        change = A @ stream
        assert np.linalg.norm(change) <= np.sqrt(T.bit_length()) * 1.0 + 1e-12
    stream = np.zeros((T, 2))
    stream[0] = v
    assert np.isclose(np.linalg.norm(A @ stream), np.sqrt(T.bit_length()))


def test_oracle16_no_noise_gives_exact_prefix_sums():
    stream = np.random.default_rng(0).standard_normal((20, 3))
    for vr in (False, True):
        out = tree_aggregation(stream, noise_scale=0.0, variance_reduced=vr, random_state=1)
        np.testing.assert_allclose(out, np.cumsum(stream, axis=0), rtol=0, atol=1e-12)


@pytest.mark.statistical
@pytest.mark.parametrize("variance_reduced", [False, True], ids=["plain", "honaker"])
def test_oracle15_prefix_noise_variance(variance_reduced):
    # Var(N_s) = popcount(s) sigma^2 (plain) or sigma^2 sum 2^k / (2^{k+1} - 1) (Honaker),
    # per coordinate: 4000 coordinates x 1 run give a relative standard error sqrt(2/4000)
    # = 2.2%; checked within 5 standard errors. Unbiased: mean within 5 standard errors.
    T, p, sigma = 16, 4000, 1.5
    out = tree_aggregation(np.zeros((T, p)), noise_scale=sigma,
                           variance_reduced=variance_reduced, random_state=7)
    for s in range(1, T + 1):
        var = prefix_noise_variance(s, variance_reduced) * sigma ** 2
        se = var * np.sqrt(2.0 / p)
        assert abs(out[s - 1].var() - var) < 5 * se, s
        assert abs(out[s - 1].mean()) < 5 * np.sqrt(var / p)
    # Cov(N_s, N_s') = sigma^2 |shared nodes| for the plain tree (15 = 8+4+2+1, 14 = 8+4+2)
    if not variance_reduced:
        cov = np.mean(out[14] * out[13])
        assert abs(cov - 3 * sigma ** 2) < 5 * sigma ** 2 * np.sqrt(12.0 / p)
        inc = out[7] - out[6]                              # increment at s = 8: ctz + 1 = 4
        assert abs(inc.var() - 4 * sigma ** 2) < 5 * 4 * sigma ** 2 * np.sqrt(2.0 / p)


def test_variance_reduced_is_never_worse():
    for s in range(1, 200):
        assert prefix_noise_variance(s, True) <= prefix_noise_variance(s, False)
        assert prefix_noise_variance(s, True) >= 0.5 * prefix_noise_variance(s, False)
    assert prefix_noise_variance(3, True) == 1.0 + 2.0 / 3.0


def test_oracle17_reproducible_and_independent_nodes():
    a = tree_aggregation(np.zeros((8, 500)), noise_scale=1.0, random_state=4, n_threads=1)
    b = tree_aggregation(np.zeros((8, 500)), noise_scale=1.0, random_state=4, n_threads=2)
    assert a.tobytes() == b.tobytes()
    # leaves 1 and 3 are single nodes (0, 1) and... N_1 = xi_{0,1}, N_2 = xi_{1,1}: independent
    corr = np.corrcoef(a[0], a[1])[0, 1]
    assert abs(corr) < 5 / np.sqrt(500)
    # a shared node gives the same noise in both estimators (common random numbers)
    c = tree_aggregation(np.zeros((8, 500)), noise_scale=1.0, random_state=4,
                         variance_reduced=True)
    np.testing.assert_array_equal(a[0], c[0])


def test_fresh_noise_without_seed_and_horizon_enforced():
    tree = TreeAggregation(3, 2, noise_scale=1.0)
    tree.next(np.zeros(3))
    tree.next(np.zeros(3))
    with pytest.raises(RuntimeError, match="steps=2"):
        tree.next(np.zeros(3))


def test_event_and_accounting():
    tree = TreeAggregation(3, 100, noise_scale=2.0, random_state=0)
    event = tree.event(0.5)
    assert event == SingleEpochTreeAggregationDpEvent(4.0, 100)
    gdp = GdpAccountant(NeighboringRelation.ZERO_OUT).compose(event)
    assert np.isclose(gdp.mu, np.sqrt(7) / 4.0)            # bit_length(100) = 7
    assert gdp.get_epsilon(1e-5) == gdp_epsilon(gdp.mu, 1e-5)


def test_bad_arguments():
    with pytest.raises(ValueError, match="steps"):
        TreeAggregation(3, 0, noise_scale=1.0)
    with pytest.raises(ValueError, match="noise_scale"):
        TreeAggregation(3, 4, noise_scale=-1.0)
    with pytest.raises(ValueError, match="stream"):
        tree_aggregation(np.zeros(4), noise_scale=1.0)


@pytest.mark.statistical
def test_oracle23_audit_of_the_tree():
    # Canary: leaf 1 (in bit_length(T) nodes, the worst leaf) changes by Delta in one
    # coordinate; the n trials are the n independent coordinates of one tree run. The
    # likelihood-ratio statistic sums the released nodes holding leaf 1 (the prefixes of length
    # 2^k are exactly those nodes). The audit's lower bound must not exceed the accounted
    # epsilon, and it comes close to it (the sqrt(bit_length(T)) sensitivity is attained).
    from dpsco_core.audit import audit
    T, sigma, delta = 12, 2.0, 1e-3
    powers = [2 ** k for k in range(T.bit_length())]

    def sampler(leaf, n, seed_seq):
        stream = np.zeros((T, n))
        stream[0] = leaf
        out = tree_aggregation(stream, noise_scale=sigma, random_state=seed_seq)
        return sum(out[s - 1] for s in powers)

    event = TreeAggregation(1, T, noise_scale=sigma).event(1.0)
    claimed = GdpAccountant(NeighboringRelation.ZERO_OUT).compose(event).get_epsilon(delta)
    result = audit(sampler, 0.0, 1.0, n_trials=400_000, delta=delta, random_state=0)
    assert result.eps_lower <= claimed
    assert result.eps_lower >= 0.6 * claimed
