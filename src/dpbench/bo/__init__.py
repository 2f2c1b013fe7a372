"""kusner_dpbo (Kusner et al. 2015, "Differentially Private Bayesian Optimization"): Bayesian
optimisation by GP-UCB over a finite candidate set Λ of hyper-parameters, the validation data being
private. :mod:`~dpbench.bo.gp` holds the exact Gaussian-process machinery of Sec. 2 (kernels k₂,
posterior eq. 2, GP-UCB eq. 3 with β_t of Alg. 1), the maximum-information-gain bound γ_T of
Srinivas et al. (2010) and the multi-task marginal likelihood of Sec. 6 (eq. 14, Fig. 1).
"""
