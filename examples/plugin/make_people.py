"""Writes src/dpbench_example_plugin/data/people.csv: 2,000 generated people (seed 0). Age is uniform
on 17..90 and hours on 1..99 (the ranges the dataset preset declares); job is one of four; the label
follows a logistic model of them."""

from pathlib import Path

import numpy as np
import pandas as pd

rng = np.random.default_rng(0)
n = 2000
age = rng.integers(17, 91, size=n)
hours = rng.integers(1, 100, size=n)
job = rng.choice(["clerk", "farmer", "nurse", "teacher"], size=n)
score = 0.06 * (age - 45) + 0.04 * (hours - 40) + np.where(job == "teacher", 0.8, 0.0) - 0.5
income = np.where(rng.random(n) < 1 / (1 + np.exp(-score)), ">50K", "<=50K")
out = Path(__file__).parent / "src" / "dpbench_example_plugin" / "data" / "people.csv"
pd.DataFrame({"age": age, "hours": hours, "job": job, "income": income}).to_csv(out, index=False)
