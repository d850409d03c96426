"""Sphinx configuration of the dpsco-core documentation (built by ``tools/build_docs.sh``).

The API reference (``api.rst``) is written here, at configuration time, from the ``__all__``
of the modules users import, so that a name added to an ``__all__`` is documented without an
edit to the docs; each object is documented once, in the first section that exports it. The
user-guide examples in ``examples/`` are run by sphinx-gallery at every build (as
scikit-learn's gallery is): a failing example fails the build.
"""

import importlib
import inspect
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))          # the source tree (kernels compiled in place)
os.environ.setdefault("OMP_NUM_THREADS", "1")

import dpsco_core  # noqa: E402

project = "dpsco-core"
author = "dpsco-core developers"
copyright = "dpsco-core developers, BSD-3-Clause"
release = version = dpsco_core.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "examples/README.txt", "**/sg_execution_times.rst"]
html_theme = "alabaster"
html_theme_options = {"description": "Differentially private stochastic convex optimization",
                      "fixed_sidebar": True}
html_static_path: list[str] = []
# mathjax is loaded from its CDN when a page is viewed; the build itself needs no network

autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": False}
autodoc_typehints = "none"             # the signatures carry the hints; numpydoc carries types
autodoc_inherit_docstrings = True
numpydoc_show_class_members = False    # members are listed by the class template
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",    # run every example
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "write_computation_times": False,
    "reference_url": {"dpsco_core": None},
}

# -- API reference -----------------------------------------------------------------------------

#: (module users import, section title, intro line). Order matters: an object is documented
#: under the first module whose ``__all__`` exports it (``dpsco_core.dp_cd``, not
#: ``dpsco_core.solvers.dp_cd``).
API_MODULES = [
    ("dpsco_core", "Top level", "The names ``import dpsco_core as dp`` gives (``dp.dp_cd``, ...)."),
    ("dpsco_core.solvers", "Solvers", "Every private solver, its schedules and baselines."),
    ("dpsco_core.privacy", "Privacy accounting",
     "Events, accountants, conversions, calibration, reports and budgets."),
    ("dpsco_core.privacy.report", "Privacy reports", "What a solver's ``Result.privacy`` holds."),
    ("dpsco_core.privacy.interop", "Interoperability with dp-accounting",
     "Events converted both ways (dp-accounting is optional)."),
    ("dpsco_core.mechanisms", "Mechanisms", "Gaussian, Laplace, report-noisy-max, exponential."),
    ("dpsco_core.exceptions", "Exceptions and warnings", "What the library raises and warns."),
    ("dpsco_core.estimators", "Estimators", "scikit-learn-style estimators (needs scikit-learn)."),
    ("dpsco_core.preprocessing", "Private standardization",
     "A private ``StandardScaler`` for pipelines (needs scikit-learn)."),
    ("dpsco_core.feature_scales", "Private feature scales",
     "The release behind ``DPStandardScaler``, without scikit-learn."),
    ("dpsco_core.problems", "Problems", "Data, loss and penalty in one object."),
    ("dpsco_core.public_bounds", "Public bounds", "Bounds on the data that are not read from it."),
    ("dpsco_core.losses", "Losses", "Per-sample losses with compiled derivatives."),
    ("dpsco_core.penalties", "Penalties", "Regularizers with compiled proximal operators."),
    ("dpsco_core.projections", "Projections", "Euclidean projections onto balls and the simplex."),
    ("dpsco_core.result", "Results", "What every solver returns."),
    ("dpsco_core.tree", "Tree aggregation", "Streaming binary-tree (continual counting) noise."),
    ("dpsco_core.mirror_maps", "Mirror maps", "p-norm and entropic mirror maps (l1 geometry)."),
    ("dpsco_core.mlmc", "MLMC optimum estimators", "Multilevel Monte Carlo estimators and uses."),
    ("dpsco_core.ball_acceleration", "Ball acceleration", "Accelerated proximal point oracles."),
    ("dpsco_core.resque", "ReSQue", "Paper 000 in one package: estimator, smoothing, SCO."),
    ("dpsco_core.resque.estimator", "ReSQue estimator", "Reweighted stochastic query estimators."),
    ("dpsco_core.resque.smoothing", "Gaussian smoothing", "Closed-form Gaussian-smoothed losses."),
    ("dpsco_core.resque.parallel_sco", "Parallel SCO", "Theorems 1 and 2 of Carmon et al."),
    ("dpsco_core.resque.private_erm", "Private ERM in a ball", "Algorithms 3 to 7 (ReSQue)."),
    ("dpsco_core.resque.private_data", "Private data", "Lipschitz records for private ReSQue."),
    ("dpsco_core.resque.private_sco", "Private ERM and SCO", "Theorems 3 and 4 (ReSQue)."),
    ("dpsco_core.resque.private_baselines", "Private baselines", "Noisy GD, phased ERM."),
    ("dpsco_core.parallel", "Executors", "Executors for batched oracle calls and row blocks "
     "(in process or on Dask workers)."),
    ("dpsco_core.tuning", "Private hyperparameter selection",
     "Random-stopping selection (Papernot-Steinke, Liu-Talwar) with its privacy cost."),
    ("dpsco_core.tuning.search", "Tuning a solver", "Private step and clip selection for DP-CD "
     "and DP-SGD (`tune_solver`)."),
    ("dpsco_core.tuning.grids", "Grids and defaults", "The public candidates of a search, and "
     "the default step and clip without one (`default_hyperparameters`)."),
    ("dpsco_core.optimum", "Non-private optimum", "High-precision reference solutions."),
    ("dpsco_core.datasets", "Datasets", "Shipped datasets and synthetic generators."),
    ("dpsco_core.audit", "Privacy auditing", "Empirical lower bounds on epsilon."),
]


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items() if not n.startswith("_")
                 and getattr(v, "__module__", None) == module.__name__]
    return [n for n in names if not n.startswith("_")]


def _documented(obj):
    return inspect.isclass(obj) or inspect.isfunction(obj)


def write_api(path):
    seen = set()
    lines = ["API reference", "=" * 13, "",
             "Generated from the ``__all__`` of each module below (``docs/site/conf.py``); "
             "each object appears once, under the first module that exports it.", ""]
    for name, title, intro in API_MODULES:
        module = importlib.import_module(name)
        entries = []
        for attr in _public_names(module):
            obj = getattr(module, attr)
            if not _documented(obj) or id(obj) in seen:
                continue
            seen.add(id(obj))
            entries.append(attr)
        lines += [title, "-" * len(title), "", f".. module:: {name}", "",
                  f"``{name}``: {intro}", ""]
        if entries:
            lines += [".. autosummary::", "   :toctree: generated/", "   :nosignatures:", ""]
            lines += [f"   {e}" for e in entries] + [""]
        else:
            lines += ["(Names re-exported from the sections above.)", ""]
    text = "\n".join(lines)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


write_api(HERE / "api.rst")
