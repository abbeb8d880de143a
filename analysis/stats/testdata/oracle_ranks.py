#!/usr/bin/python3
"""Golden values for the serial diagnostics on ranks (ranks_golden.json).

statsmodels' acf and acorr_ljungbox applied to SciPy's rankdata(x,
method='average') of heavy-tailed, dependent series, the case the studies
check ranks for (a raw ACF is dominated by the few largest values):

    /usr/bin/python3 analysis/stats/testdata/oracle_ranks.py > analysis/stats/testdata/ranks_golden.json

Inputs are drawn from NumPy RandomState(20261201) and written into the
JSON, so the Go test (oracle_ranks_test.go) needs no Python.
"""
import json
import sys

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.tsa.stattools import acf

rs = np.random.RandomState(20261201)


def ar1_heavy(n, phi):
    """AR(1) on a log scale with a few spikes: latency-like."""
    e = rs.standard_normal(n)
    z = np.empty(n)
    z[0] = e[0] / np.sqrt(1 - phi * phi)
    for t in range(1, n):
        z[t] = phi * z[t - 1] + e[t]
    x = 1.0 + np.exp(0.3 * z)
    spikes = rs.rand(n) < 0.01
    x[spikes] *= 200.0
    return np.round(x, 3)  # ties, as in millisecond data


cases = [("ar1 0.7 heavy n=300", ar1_heavy(300, 0.7), 10),
         ("ar1 0.2 heavy n=1000", ar1_heavy(1000, 0.2), 10),
         ("iid heavy n=500", ar1_heavy(500, 0.0), 5)]
out = []
for name, x, lags in cases:
    r = stats.rankdata(x, method="average")
    ra = acf(r, nlags=lags, adjusted=False, fft=False)
    lb = acorr_ljungbox(r, lags=[lags], return_df=True)
    xa = acf(x, nlags=lags, adjusted=False, fft=False)
    out.append({"name": name, "x": [float(v) for v in x], "lags": lags, "ranks": [float(v) for v in r],
                "rank_acf": [float(v) for v in ra], "rank_lb_q": float(lb["lb_stat"].iloc[0]),
                "rank_lb_p": float(lb["lb_pvalue"].iloc[0]), "raw_acf": [float(v) for v in xa]})
json.dump({"generator": "analysis/stats/testdata/oracle_ranks.py",
           "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                        "statsmodels": statsmodels.__version__},
           "serial_ranks": out}, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
