#!/usr/bin/python3
"""Golden values for the round-level statistics of package stats
(WilcoxonSignedRank, Friedman) from SciPy.

Run with Debian's Python (bookworm: python3-scipy 1.10.1):

    /usr/bin/python3 analysis/stats/testdata/oracle_rounds.py > analysis/stats/testdata/golden_rounds.json

The inputs are drawn from NumPy RandomState with a fixed seed and written
into the JSON next to each result, so the Go tests need no Python. Kept
apart from oracle.py so that these values need SciPy only (no R).
"""
import json

import numpy as np
import scipy
from scipy import stats

rs = np.random.RandomState(20261201)


def fl(a):
    return [float(v) for v in a]


def wilcoxon_case(name, d, method):
    res = stats.wilcoxon(d, zero_method="wilcox", correction=False,
                         alternative="two-sided", method=method)
    return {"name": name, "d": fl(d), "method": method,
            "w": float(res.statistic), "p": float(res.pvalue)}


wil = []
# Exact: untied, no zeros, the sizes the studies use (6 to 20 rounds).
for n in (6, 10, 12, 20):
    d = np.round(rs.normal(0.3, 1.0, n), 6)
    wil.append(wilcoxon_case(f"exact n={n}", d, "exact"))
wil.append(wilcoxon_case("exact all positive n=20", np.round(rs.lognormal(0, 1, 20), 6), "exact"))
wil.append(wilcoxon_case("exact centred n=9", np.array([-4.0, -3.0, -2.0, -1.0, 0.5, 1.5, 2.5, 3.5, 5.0]), "exact"))
# Normal approximation with ties and zeros (zeros dropped).
d = np.round(rs.normal(0.2, 1.0, 40), 1)
d[:3] = 0.0
wil.append(wilcoxon_case("approx ties zeros n=40", d, "approx"))
wil.append(wilcoxon_case("approx n=60", np.round(rs.normal(0.1, 1.0, 60), 6), "approx"))

fri = []


def friedman_case(name, blocks):
    cols = [blocks[:, j] for j in range(blocks.shape[1])]
    res = stats.friedmanchisquare(*cols)
    return {"name": name, "blocks": [fl(b) for b in blocks],
            "q": float(res.statistic), "p": float(res.pvalue)}


b = np.round(rs.lognormal(0, 0.5, (20, 4)) + np.array([0.0, 0.1, 0.3, 1.0]), 6)
fri.append(friedman_case("20 rounds x 4 configurations", b))
b = np.round(rs.normal(0, 1, (12, 3)), 0)
fri.append(friedman_case("ties 12 x 3", b))
b = np.round(rs.normal(0, 1, (3, 5)), 6)
fri.append(friedman_case("3 rounds x 5", b))

out = {"versions": {"numpy": np.__version__, "scipy": scipy.__version__},
       "wilcoxon": wil, "friedman": fri}
print(json.dumps(out, indent=1, sort_keys=True))
