# Issue 19 diagnosis (see diagnosis.md); run from the repository root:
#   PYTHONPATH=. python docs/tuning/score_clip_bias.py
import warnings; warnings.simplefilter("ignore")
import numpy as np
from dpsco_core.experiments import dpcd
from dpsco_core.experiments.tuning import _public_scale, _loss_clip, _relative
from dpsco_core.tuning import grids
from dpsco_core.tuning.search import _run_solver
from dpsco_core.privacy.budget import _check_relation
rel=_check_relation("zero_out")
st=dpcd.build_settings(["california_raw"])[0]; P=st.problem
B=_loss_clip(P); print("B",B, "F*",st.optimum)
scale=_public_scale(P,"sgd")
for step in [0.1,1]:
  for kappa in [0.00316,0.01,0.0316]:
    c=grids.Candidate(step,kappa*scale)
    for seed in range(2):
        w=_run_solver("sgd",P,c,0.43,st.delta,50,256,False,rel,seed).coef
        l=P.loss.value(P.X@w,P.y)
        pen=P.penalty.value(w)
        print(step,kappa,seed,"err %.4g"%_relative(st,w),"clipped obj %.4f"%(np.minimum(l,B).mean()+pen),"obj %.4f"%(l.mean()+pen),"frac>B %.4f"%(l>B).mean(), "max loss %.3g"%l.max())
