"""Real datasets of the DP-CD experiments, shipped inside the package (no network).

Both files are gzip-compressed copies of the CSVs in the project's ``shared/data`` folder; the
SHA-256 of the decompressed bytes is checked on every load, so a corrupted or altered copy
raises instead of silently changing results.
"""

import csv
import gzip
import hashlib
import io
from importlib import resources

import numpy as np

__all__ = ["load_california", "load_electricity", "CALIFORNIA_SHA256", "ELECTRICITY_SHA256"]

#: SHA-256 of the decompressed ``california_housing.csv``.
CALIFORNIA_SHA256 = "8a3727f4cf54ac1a327f69b1d5b4db54c5834ea81c6e4efc0d163300022a685e"
#: SHA-256 of the decompressed ``electricity.csv``.
ELECTRICITY_SHA256 = "9fccbd259787ba5b6f58485850e24c8566d3226f2d0ed027f12e2f363fb47795"

CALIFORNIA_FEATURES = ("MedInc", "HouseAge", "AveRooms", "AveBedrms", "Population",
                       "AveOccup", "Latitude", "Longitude")
ELECTRICITY_FEATURES = ("date", "day", "period", "nswprice", "nswdemand", "vicprice",
                        "vicdemand", "transfer")


def _read_csv(filename, sha256):
    raw = gzip.decompress(resources.files("dpsco_core.data").joinpath(filename).read_bytes())
    digest = hashlib.sha256(raw).hexdigest()
    if digest != sha256:
        raise OSError(f"{filename}: checksum mismatch (sha256 {digest}, expected {sha256}); "
                      "the shipped copy is corrupted, reinstall dpsco-core.")
    reader = csv.reader(io.StringIO(raw.decode("utf-8")))
    header = next(reader)
    return header, list(reader)


def load_california(*, raw=False):
    """California housing: regression, n = 20,433, p = 8 (the scikit-learn features).

    Parameters
    ----------
    raw : bool, default=False
        Return the original numeric columns instead (longitude, latitude,
        housing_median_age, total_rooms, total_bedrooms, population, households,
        median_income; target median_house_value in dollars), still without the incomplete
        rows; the categorical ``ocean_proximity`` column is not returned.

    Returns
    -------
    X : ndarray of shape (20433, 8), float64, C-ordered
        MedInc, HouseAge, AveRooms = total_rooms / households, AveBedrms = total_bedrooms /
        households, Population, AveOccup = population / households, Latitude, Longitude.
    y : ndarray of shape (20433,)
        Median house value in units of 100,000 dollars.

    Notes
    -----
    Provenance: the 1990 California census block groups of Pace and Barry (1997), as in the
    public handson-ml2 repository (``datasets/housing/housing.csv``): 20,640 rows, of which
    the 207 with a missing ``total_bedrooms`` are dropped, leaving n = 20,433. SHA-256 of the
    CSV: ``8a3727f4cf54ac1a327f69b1d5b4db54c5834ea81c6e4efc0d163300022a685e``.
    """
    header, rows = _read_csv("california_housing.csv.gz", CALIFORNIA_SHA256)
    numeric = header[:9]
    data = np.array([[float(v) for v in row[:9]] for row in rows if all(row[:9])],
                    dtype=np.float64)
    col = {name: data[:, k] for k, name in enumerate(numeric)}
    if raw:
        return np.ascontiguousarray(data[:, :8]), data[:, 8].copy()
    households = col["households"]
    X = np.column_stack([
        col["median_income"],
        col["housing_median_age"],
        col["total_rooms"] / households,
        col["total_bedrooms"] / households,
        col["population"],
        col["population"] / households,
        col["latitude"],
        col["longitude"],
    ])
    return np.ascontiguousarray(X), col["median_house_value"] / 100_000.0


def load_electricity():
    """Electricity (Elec2, normalized): binary classification, n = 45,312, p = 8.

    Returns
    -------
    X : ndarray of shape (45312, 8), float64, C-ordered
        date, day, period, nswprice, nswdemand, vicprice, vicdemand, transfer.
    y : ndarray of shape (45312,)
        +1.0 for UP, -1.0 for DOWN (the labels the logistic loss of the DP-CD paper uses).

    Notes
    -----
    Provenance: M. Harries (1999), "Splice-2 comparative evaluation: Electricity pricing"
    (New South Wales market), normalized form ``elecNormNew`` (OpenML dataset 151). SHA-256 of
    the CSV: ``9fccbd259787ba5b6f58485850e24c8566d3226f2d0ed027f12e2f363fb47795``.
    """
    _, rows = _read_csv("electricity.csv.gz", ELECTRICITY_SHA256)
    data = np.array(rows, dtype=np.float64)
    y = np.where(data[:, 8] == 1.0, 1.0, -1.0)
    return np.ascontiguousarray(data[:, :8]), y
