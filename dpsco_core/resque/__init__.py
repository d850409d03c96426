r"""ReSQue (Carmon, Jambulapati, Jin, Lee, Liu, Sidford, Tian 2023): paper 000 in one package.

- :mod:`~dpsco_core.resque.estimator`: the reweighted stochastic query estimator (Definition 2,
  Lemmas 1-2), batched and with a GLM fast path;
- :mod:`~dpsco_core.resque.smoothing`: closed-form Gaussian-smoothed losses (test oracles);
- :mod:`~dpsco_core.resque.parallel_sco`: the parallel algorithms of Section III (Algorithms 1-2,
  Theorems 1-2), **not private**;
- the private algorithms of Section IV (Algorithms 3-7, Theorem 3, Proposition 11 / Theorem 4),
  (ε, δ)-DP under replace-one neighbours, with their baselines, in the ``private_*`` modules.

Shared pieces stay where every paper's code reaches them: ball acceleration in
:mod:`dpsco_core.ball_acceleration`, the executors in :mod:`dpsco_core.parallel`, MLMC in
:mod:`dpsco_core.mlmc`, the accountant in :mod:`dpsco_core.privacy`.

Every name in the ``__all__`` of a module of this package is available as
``dpsco_core.resque.<name>``. The modules are imported eagerly and their names bound after,
because importing a submodule binds the *module* under its own name (``resque.parallel_sco``)
and the function of the same name must win (as in :mod:`dpsco_core.solvers`).
"""

import importlib

__all__: list[str] = []

for _mod_name in ("estimator", "smoothing", "parallel_sco", "private_data", "private_erm",
                  "private_sco", "private_baselines"):
    _module = importlib.import_module(f"{__name__}.{_mod_name}")
    for _name in _module.__all__:
        globals()[_name] = getattr(_module, _name)
        __all__.append(_name)

del _mod_name, _module, _name
