"""The field's practical DP-ERM methods, written as a dpbench plugin.

Every method here is a :class:`dpbench.algorithms.base.Algorithm` subclass that uses only dpbench's
public method protocol (docs/add-your-method.md, "The public protocol"): the modules and names listed
there, nothing private (``tests/practical/test_public_protocol.py`` checks every import). dpbench finds
them through the ``dpbench.methods`` entry points of its own ``pyproject.toml``, as it finds any
plugin's, so they prove that a method can join every comparison without touching dpbench's internals.

- :mod:`dpbench_practical.amp`: Approximate Minima Perturbation and its hyper-parameter-free schedule
  (Iyengar, Near, Song, Thakkar, Thakurta & Wang, IEEE S&P 2019);
- :mod:`dpbench_practical.frank_wolfe`: private Frank–Wolfe over an ℓ1 ball (Talwar, Thakurta & Zhang 2015);
- :mod:`dpbench_practical.newton`: DP-Newton with double noise and its DP-GD baseline (Ganesh, Haghifam, Steinke
  & Thakurta, NeurIPS 2023);
- :mod:`dpbench_practical.data_terms`: the GLM data term's gradient and Hessian over the public n̄;
- :mod:`dpbench_practical.audit`: their ``dpbench-audit`` targets (``dpbench.audit_targets`` entry points).
"""
