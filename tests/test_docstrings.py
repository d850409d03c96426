"""Every public callable has a numpydoc docstring (issue 17).

Walks the public API: every name in ``dpsco_core.__all__`` and, for each module in
``MODULES``, every function and class its ``__all__`` exports (or, without ``__all__``, that it
defines under a name not starting with ``_``), and each such class's public methods and
properties (defined in the class itself, names not starting with ``_``).

The rule:

* every function, class, method and property has a docstring (docstrings inherited from a
  class of the package count: an override keeps the contract its base documents, as Sphinx's
  autodoc shows it; one inherited from ``typing.Protocol`` or ``tuple`` does not);
* a function or method that takes parameters (other than ``self``/``cls``) has a numpydoc
  ``Parameters`` section; a class whose constructor takes parameters has a ``Parameters`` (or,
  for result records users do not build themselves, ``Attributes``) section in the class or
  ``__init__`` docstring;
* the names that section documents are the signature's parameters: every parameter is
  documented (``a, b : float`` documents both; ``**kwargs`` as ``**kwargs``), and a function's
  section names no parameter it does not take;
* a one-line docstring is enough only for what takes no parameter: properties, and methods or
  functions without arguments. Exceptions, warnings and enumerations are exempt from the
  ``Parameters`` rule (their constructors are the standard ones).

The NumPy twins in ``dpsco_core.reference`` only need a docstring: each takes exactly the
arguments of the compiled kernel it mirrors (an internal calling convention, documented once
in ``src_cython``), and its docstring names that kernel (``REFERENCE_TWINS``).

The ``Examples`` sections of these modules run as doctests (``test_docstring_examples_run``),
and every callable that takes an ``epsilon`` and data states its privacy guarantee and its
neighbouring relation, or says it is not private (``test_release_states_its_guarantee_...``).

"""

import doctest
import enum
import importlib
import inspect
import re
import sys

import pytest

import dpsco_core

MODULES = [
    "dpsco_core.solvers",
    "dpsco_core.solvers.dp_cd", "dpsco_core.solvers.dp_sgd", "dpsco_core.solvers.dp_srgd",
    "dpsco_core.solvers.frank_wolfe", "dpsco_core.solvers.mirror_descent",
    "dpsco_core.solvers.smoothness", "dpsco_core.solvers.srgd_baselines",
    "dpsco_core.solvers.ssp",
    "dpsco_core.privacy",
    "dpsco_core.privacy.accountants", "dpsco_core.privacy.budget",
    "dpsco_core.privacy.calibration", "dpsco_core.privacy.conversions",
    "dpsco_core.privacy.events", "dpsco_core.privacy.gdp", "dpsco_core.privacy.interop",
    "dpsco_core.privacy.rdp", "dpsco_core.privacy.report",
    "dpsco_core.privacy.approximate_rdp", "dpsco_core.privacy.with_replacement",
    "dpsco_core.mechanisms",
    "dpsco_core.estimators",
    "dpsco_core.feature_scales", "dpsco_core.preprocessing",
    "dpsco_core.exceptions",
    "dpsco_core.problems",
    "dpsco_core.public_bounds",
    "dpsco_core.losses",
    "dpsco_core.penalties",
    "dpsco_core.projections",
    "dpsco_core.result",
    "dpsco_core.tree",
    "dpsco_core.mlmc",
    "dpsco_core.parallel", "dpsco_core.resque.parallel_sco",
    "dpsco_core.datasets",
    "dpsco_core.mirror_maps",
    "dpsco_core.resque.smoothing",
    "dpsco_core.resque", "dpsco_core.resque.estimator",
    "dpsco_core.resque.private_data", "dpsco_core.resque.private_erm",
    "dpsco_core.resque.private_sco", "dpsco_core.resque.private_baselines",
    "dpsco_core.ball_acceleration",
    "dpsco_core.optimum",
    "dpsco_core.audit",
    # NumPy twins of the kernels (public: test oracles and benchmark baselines)
    "dpsco_core.reference.batch", "dpsco_core.reference.cd", "dpsco_core.reference.discrete",
    "dpsco_core.reference.frank_wolfe", "dpsco_core.reference.loss",
    "dpsco_core.reference.mirror", "dpsco_core.reference.mlmc", "dpsco_core.reference.noise",
    "dpsco_core.reference.noisy_max", "dpsco_core.reference.prox",
    "dpsco_core.reference.resque", "dpsco_core.reference.tree",
]

REFERENCE_TWINS = "dpsco_core.reference."

SECTION = re.compile(r"^(Parameters|Attributes)\n-{3,}$", re.M)
HEADER = re.compile(r"^([A-Z][A-Za-z ]+)\n-{3,}$", re.M)


def _documented_names(doc, sections=("Parameters", "Other Parameters", "Attributes")):
    """Names documented in the given numpydoc sections of a (dedented) docstring."""
    headers = list(HEADER.finditer(doc))
    names = set()
    for k, header in enumerate(headers):
        if header.group(1) not in sections:
            continue
        end = headers[k + 1].start() if k + 1 < len(headers) else len(doc)
        for line in doc[header.end():end].splitlines():
            if not line.strip() or line[0].isspace():
                continue
            head = line.split(" : ")[0] if " : " in line else line.rstrip(":")
            names.update(n.strip().lstrip("*") for n in head.split(",") if n.strip())
    return names


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n, v in vars(module).items()
                 if getattr(v, "__module__", None) == module.__name__]
    return [n for n in names if not n.startswith("_")]


def _parameters(func):
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    return [p for p in signature.parameters if p not in ("self", "cls") and not p.startswith("_")]


def _exempt_class(cls):
    # exceptions and enumerations keep the standard constructors; a typing.Protocol is never
    # instantiated (its docstring states the call protocol instead)
    return issubclass(cls, (BaseException, enum.Enum)) or getattr(cls, "_is_protocol", False)


def _callables():
    """(qualified name, kind, object, docstring to check) for every public callable, once."""
    seen = set()
    modules = [dpsco_core] + [importlib.import_module(m) for m in MODULES]
    for module in modules:
        for name in _public_names(module):
            obj = getattr(module, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not obj.__module__.startswith("dpsco_core") or id(obj) in seen:
                continue
            seen.add(id(obj))
            qualname = f"{obj.__module__}.{obj.__qualname__}"
            if inspect.isfunction(obj):
                yield qualname, "function", obj, inspect.getdoc(obj)
                continue
            # a class's own docstring: one inherited from outside the package (typing.Protocol,
            # tuple) does not document it
            doc = inspect.cleandoc(vars(obj).get("__doc__") or "")
            if not doc:
                doc = next((inspect.getdoc(base) for base in obj.__mro__[1:-1]
                            if base.__module__.startswith("dpsco_core") and base.__doc__), "")
            if "__init__" in vars(obj):
                doc += "\n" + (inspect.getdoc(obj.__init__) or "")
            yield qualname, "class", obj, doc
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(value, property):
                    yield f"{qualname}.{attr}", "property", value, value.__doc__
                    continue
                func = getattr(value, "__func__", value)
                if inspect.isfunction(func):
                    method = getattr(obj, attr)
                    yield f"{qualname}.{attr}", "method", method, inspect.getdoc(method)


CALLABLES = list(_callables())


def test_the_walk_finds_the_api():
    names = {name for name, *_ in CALLABLES}
    assert len(CALLABLES) > 250
    assert "dpsco_core.solvers.dp_cd.dp_cd" in names
    assert "dpsco_core.penalties.L1" in names
    assert "dpsco_core.mechanisms.report_noisy_max" in names


def _problem(name, kind, obj, doc):
    if not doc or not doc.strip():
        return "no docstring"
    if kind == "property" or name.startswith(REFERENCE_TWINS):
        return None
    if kind == "class":
        init = obj.__init__ if "__init__" in vars(obj) or not _exempt_class(obj) else None
        needs = (not _exempt_class(obj) and init is not None and init is not object.__init__
                 and bool(_parameters(obj)))
    else:
        needs = bool(_parameters(obj))
    if not needs:
        return None
    if not SECTION.search(doc):
        return "takes parameters but its docstring has no numpydoc 'Parameters' section"
    documented = _documented_names(doc)
    parameters = [p.lstrip("*") for p in _parameters(obj)]
    missing = [p for p in parameters if p not in documented]
    if missing:
        return f"parameters not documented: {missing}"
    if kind != "class":
        unknown = sorted(documented - set(parameters) - {"self", "cls"})
        if unknown:
            return f"documents parameters it does not take: {unknown}"
    return None


@pytest.mark.parametrize("name, kind, obj, doc", CALLABLES, ids=[c[0] for c in CALLABLES])
def test_public_callable_is_documented(name, kind, obj, doc):
    problem = _problem(name, kind, obj, doc)
    assert problem is None, f"{kind} {name}: {problem}"


def test_no_control_characters_in_docstrings():
    # A math backslash in a non-raw docstring is an escape: "\rho" became a carriage return,
    # "\frac" a form feed and "\top" a tab in the estimators' shared parameter text (session
    # 13). Docstrings with math are raw strings, or double their backslashes.
    # the raw __doc__: inspect.cleandoc splits lines at \r and \f and expands tabs
    control = re.compile(r"[\x07\x08\x0b\x0c\r\t]")
    bad = [name for name, _, obj, _ in CALLABLES
           if control.search(getattr(obj, "__doc__", None) or "")]
    assert not bad, f"control characters (an unescaped backslash?) in: {bad}"


# ---------------------------------------------------------------- the examples in the docstrings

def _module(name):
    # sys.modules, not getattr: dpsco_core.solvers.dp_cd is the function, the module is shadowed
    importlib.import_module(name)
    return sys.modules[name]


EXAMPLE_MODULES = sorted({m for m in MODULES if not m.startswith(REFERENCE_TWINS)}
                         | {"dpsco_core.projections", "dpsco_core.solvers.dp_cd",
                            "dpsco_core.solvers.dp_sgd", "dpsco_core.solvers.dp_srgd"})


@pytest.mark.parametrize("name", EXAMPLE_MODULES)
def test_docstring_examples_run(name):
    """The ``Examples`` sections are doctests, run as written (seconds in all)."""
    module = _module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    if name == "dpsco_core.solvers.dp_cd":
        assert result.attempted > 0            # the finder sees the solvers' examples
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"


# ---------------------------------------------------------------- releases state their guarantee

RELATION = re.compile(r"replace-one|replace_one|zero-out|zero_out|add/remove|add_or_remove"
                      r"|neighbo", re.I)
GUARANTEE = re.compile(r"-DP\b|\bGDP\b|zCDP|Privacy guarantee", re.I)
NOT_PRIVATE = re.compile(r"\bnot private\b", re.I)
DATA_ARGUMENTS = {"problem", "x", "X", "scores", "grad_batch"}

#: callables that take a privacy budget and data: they release data-dependent output
RELEASES = [(name, doc) for name, kind, obj, doc in CALLABLES
            if kind in ("function", "class", "method")
            and "epsilon" in _parameters(obj) and DATA_ARGUMENTS & set(_parameters(obj))]


def test_the_releases_are_found():
    names = {name for name, _ in RELEASES}
    assert {"dpsco_core.solvers.dp_cd.dp_cd", "dpsco_core.mechanisms.report_noisy_max",
            "dpsco_core.mlmc.dp_sco.mlmc_dp_sco"} <= names


@pytest.mark.parametrize("name, doc", RELEASES, ids=[name for name, _ in RELEASES])
def test_release_states_its_guarantee_and_relation(name, doc):
    """Anything that releases data-dependent output under an ``epsilon`` states its privacy
    guarantee and its neighbouring relation, or says that it is not private (``epsilon`` is
    then an accuracy, as in ``parallel_sco``)."""
    if NOT_PRIVATE.search(doc):
        return
    assert GUARANTEE.search(doc), f"{name}: no privacy guarantee in its docstring"
    assert RELATION.search(doc), f"{name}: no neighbouring relation in its docstring"
