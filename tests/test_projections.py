"""Public projections API: validation, new arrays, inputs left unchanged."""

import numpy as np
import pytest

from dpsco_core import projections
from dpsco_core.projections import project_l1_ball, project_l2_ball, project_simplex


def test_results_and_new_arrays(rng):
    v = rng.standard_normal(50)
    before = v.copy()
    for out in (project_l1_ball(v, 1.0), project_l2_ball(v, 1.0), project_simplex(v),
                project_l1_ball(v, np.inf), project_l2_ball(v, 1e9, center=np.zeros(50))):
        assert out.shape == v.shape and out.dtype == np.float64
        assert not np.shares_memory(out, v)
    np.testing.assert_array_equal(v, before)
    assert np.abs(project_l1_ball(v, 1.0)).sum() == pytest.approx(1.0)
    assert np.linalg.norm(project_l2_ball(v, 2.0)) == pytest.approx(2.0)
    c = rng.standard_normal(50)
    assert np.linalg.norm(project_l2_ball(v, 0.5, center=c) - c) == pytest.approx(0.5)
    x = project_simplex(v, total=3.0)
    assert x.min() >= 0 and x.sum() == pytest.approx(3.0)
    np.testing.assert_array_equal(project_l1_ball(v, np.abs(v).sum() * 2), v)


def test_array_likes_and_read_only():
    v = np.array([3.0, 4.0])
    v.flags.writeable = False
    np.testing.assert_allclose(project_l2_ball(v, 1.0), [0.6, 0.8])
    np.testing.assert_allclose(project_l2_ball([3, 4], 1), [0.6, 0.8])          # ints
    np.testing.assert_allclose(project_l1_ball(np.array([3.0, 1.0], dtype=np.float32), 2.0),
                               [2.0, 0.0])
    np.testing.assert_allclose(project_simplex(np.arange(3)[::-1]), [1.0, 0.0, 0.0])


@pytest.mark.parametrize("func", [project_l1_ball, project_l2_ball])
def test_bad_radius(func):
    with pytest.raises(ValueError, match=r"radius must be in \[0, inf\); got -1.0"):
        func([1.0, 2.0], -1.0)
    with pytest.raises(ValueError, match="radius must be a finite number"):
        func([1.0, 2.0], float("nan"))
    with pytest.raises(TypeError, match="radius must be a real number"):
        func([1.0, 2.0], "1")


@pytest.mark.parametrize("func", [lambda v: project_l1_ball(v, 1.0),
                                  lambda v: project_l2_ball(v, 1.0),
                                  # project_l2_ball reads v's finiteness off the kernel's
                                  # norm: inf <= inf must not pass v through as "inside"
                                  lambda v: project_l2_ball(v, np.inf),
                                  lambda v: project_l2_ball(v, 1.0, center=[0.5, -0.5]),
                                  lambda v: project_simplex(v)])
def test_bad_vector(func):
    with pytest.raises(ValueError, match="v must contain only finite values"):
        func([1.0, np.nan])
    with pytest.raises(ValueError, match="v must contain only finite values"):
        func([1.0, np.inf])
    with pytest.raises(ValueError, match="v must be 1-dimensional"):
        func(np.ones((2, 2)))
    with pytest.raises(ValueError, match="v must not be empty"):
        func([])
    with pytest.raises(TypeError, match="v must be an array of real numbers"):
        func(["a", "b"])


def test_bad_center_and_total():
    with pytest.raises(ValueError, match=r"center must have the length of v \(2\); got 3"):
        project_l2_ball([1.0, 2.0], 1.0, center=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="center must contain only finite values"):
        project_l2_ball([1.0, 2.0], 1.0, center=[0.0, np.nan])
    with pytest.raises(ValueError, match=r"total must be in \[0, inf\); got -2.0"):
        project_simplex([1.0, 2.0], total=-2.0)
    with pytest.raises(ValueError, match="total must be a finite number"):
        project_simplex([1.0, 2.0], total=np.inf)
    np.testing.assert_array_equal(project_simplex([1.0, 2.0], total=0.0), [0.0, 0.0])


def test_n_threads_validated_and_irrelevant(rng):
    v = rng.standard_normal(200_000)
    a = project_l2_ball(v, 1.0, n_threads=1)
    np.testing.assert_array_equal(a, project_l2_ball(v, 1.0, n_threads=2))
    with pytest.raises(ValueError, match="n_threads"):
        project_l2_ball(v, 1.0, n_threads=0)


def test_listed_in_package():
    import dpsco_core
    assert dpsco_core.projections is projections
    assert set(projections.__all__) == {"project_l2_ball", "project_l1_ball", "project_simplex"}
