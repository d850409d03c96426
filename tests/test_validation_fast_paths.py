"""The plain-float / plain-int fast paths of the shared checks (issue 18, speed only) answer
exactly as the general path: the same values, the same errors."""

import math

import numpy as np
import pytest

from dpsco_core._validation import check_int, check_scalar
from dpsco_core.result import _all_finite, _stat_keys
from dpsco_core.solvers._common import array_max


@pytest.mark.parametrize("value", [0.5, np.float64(0.5), np.array(0.5), 1, np.int64(1)])
def test_check_scalar_same_value_any_real_type(value):
    out = check_scalar(value, "x", low=0.0, high=1.0, high_open=False)
    assert type(out) is float and out == float(value)


@pytest.mark.parametrize("value, error", [(math.nan, ValueError), (math.inf, ValueError),
                                          (0.0, ValueError), (1.5, ValueError),
                                          (True, TypeError), ("1", TypeError)])
def test_check_scalar_errors_name_the_argument(value, error):
    with pytest.raises(error, match="^x must"):
        check_scalar(value, "x", low=0.0, high=1.0)


def test_check_scalar_allows_inf_when_asked():
    assert check_scalar(math.inf, "clip", low=0.0, allow_inf=True) == math.inf


@pytest.mark.parametrize("value", [3, np.int64(3), np.array(3)])
def test_check_int_same_value_any_integer_type(value):
    out = check_int(value, "n", low=1, high=5)
    assert type(out) is int and out == 3


@pytest.mark.parametrize("value, error", [(0, ValueError), (6, ValueError), (True, TypeError),
                                          (3.0, TypeError)])
def test_check_int_errors(value, error):
    with pytest.raises(error, match="^n must be an integer"):
        check_int(value, "n", low=1, high=5)


@pytest.mark.parametrize("size", [1, 8, 64, 65, 200])
def test_array_max_is_numpys_max_nan_included(size):
    rng = np.random.default_rng(size)
    for trial in range(20):
        values = rng.normal(size=size) * 10.0 ** rng.integers(-300, 300)
        if trial % 3 == 0:
            values[rng.integers(size)] = np.inf
        if trial % 4 == 0:
            values[rng.integers(size)] = np.nan
        got, want = array_max(values), float(values.max())
        assert type(got) is float
        assert (math.isnan(got) and math.isnan(want)) or got == want


@pytest.mark.parametrize("size", [1, 8, 64, 65])
def test_result_finiteness_is_numpys(size):
    coef = np.ones(size)
    assert _all_finite(coef) and _all_finite(coef.astype(np.float32))
    for bad in (np.nan, np.inf, -np.inf):
        coef[-1] = bad
        assert not _all_finite(coef)


def test_stat_keys_of_a_flat_dict_and_of_nested_stats():
    flat = {"time": 0.1, "steps": np.ones(2), "n": 3, "calibration": "rdp", "x": None}
    assert _stat_keys(flat) == set(flat)
    nested = {"phases": [{"clipped": np.ones(2)}, ({"clipped_fraction": 0.5},)], "time": 1.0}
    assert _stat_keys(nested) == {"phases", "clipped", "clipped_fraction", "time"}
