#!/usr/bin/env bash
# Regenerate examples/sweeps: the two small sweeps dpbench-report's test renders (tests/report/test_report.py)
# and a newcomer can point dpbench-report at without running anything:
#   dpbench-report examples/sweeps/leaderboard examples/sweeps/han_fig2 --out report.html
# A leaderboard on the synthetic data (two private methods and the non-private reference, two budgets,
# 3 folds) and han_pwa's Fig. 2 at two box sizes with 20 repetitions. Synthetic data only: no data files.
# Noise from the seed (privacy.noise_key=seed): no secret key is committed, and the rows say they are not
# publishable. About a minute on two cores.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
export DPBENCH_CACHE="$work/cache"
dpbench -m experiment=leaderboard dataset=synthetic_logreg dataset.n=1500 privacy.eps=0.4,1.6 \
  algorithm=dp_sgd,dp_gd,nonprivate tuning=fixed privacy.noise_key=seed progress=false
dpbench -m experiment=han_fig2 reps=20 dataset.c=0.1,1.0 privacy.noise_key=seed progress=false
rm -rf "$repo/examples/sweeps"
mkdir -p "$repo/examples"
cp -r outputs/sweeps "$repo/examples/sweeps"
find "$repo/examples/sweeps" -name .lock -delete
