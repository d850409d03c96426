# Issue 19 diagnosis (see diagnosis.md); run from the repository root:
#   PYTHONPATH=. python docs/tuning/accounting_table.py ARGS
import numpy as np, warnings
warnings.simplefilter("ignore")
from dpsco_core.tuning.search import trial_epsilon
from dpsco_core.tuning.stopping import num_trials_pmf
from dpsco_core.privacy.budget import _check_relation
rel=_check_relation("zero_out")
n=20640; d=1/n**2; k=np.arange(0,3000)
for solver in ["cd","sgd"]:
  for share in [0.5,0.3]:
    for mean,shape in [(5,1),(10,1),(20,1),(40,1),(10,0),(20,0),(40,0),(5,2),(10,2),(20,2),(10,4),(20,4),(10,float('inf')),(15,float('inf')),(20,float('inf'))]:
        e,_=trial_epsilon(target_epsilon=1.0,target_delta=d,solver=solver,n_train=n,n_features=8,passes=50,mean=mean,shape=shape,relation=rel,score_share=share)
        pmf=num_trials_pmf(k,mean,shape)
        miss=lambda m:(pmf*(1-1/m)**k).sum()
        print(solver,share,mean,shape,f"e={e:.3f} miss6={miss(6):.3f} miss14={miss(14):.3f} miss14x2={(pmf*(1-2/14)**k).sum():.3f} P(K<=2)={pmf[:3].sum():.3f}")
