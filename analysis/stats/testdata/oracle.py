#!/usr/bin/python3
"""Golden values for package stats from SciPy, statsmodels and R.

Run with Debian's Python (bookworm: python3-scipy 1.10.1,
python3-statsmodels 0.13.5) and R (r-base-core 4.2.2) on PATH:

    /usr/bin/python3 analysis/stats/testdata/oracle.py > analysis/stats/testdata/golden.json

The inputs are drawn from NumPy RandomState with fixed seeds and are
written into the JSON next to each result, so the Go tests need neither
Python nor R. See README.md.
"""
import json
import subprocess
import sys
import tempfile

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.sandbox.stats.runs import runstest_1samp
from statsmodels.stats.diagnostic import acorr_ljungbox
from statsmodels.tsa.stattools import acf


def fl(a):
    return [float(v) for v in a]


def rvec(a):
    return "c(" + ",".join(repr(float(v)) for v in a) + ")"


def rscript(expr):
    """Evaluate R code that prints numbers with %.17g, one per line."""
    with tempfile.NamedTemporaryFile("w", suffix=".R") as f:
        f.write(expr + "\n")
        f.flush()
        out = subprocess.run(["Rscript", "--vanilla", f.name], check=True,
                             capture_output=True, text=True).stdout
    return [float(t) for t in out.split()]


def r_version():
    out = subprocess.run(["Rscript", "--vanilla", "-e", "cat(R.version.string)"],
                         check=True, capture_output=True, text=True).stdout
    return out.strip()


rs = np.random.RandomState(20260403)


def latency(n, loc, scale=0.6, digits=6):
    """Handshake-like times in ms: shifted lognormal, rounded to ns."""
    return np.round(loc + rs.lognormal(0, scale, n), digits)


def ints(n, lo, hi):
    return rs.randint(lo, hi, n).astype(float)


# ---- Mann-Whitney U (scipy.stats.mannwhitneyu, method='auto') ----
mwu_cases = [
    ("scipy doc males/females", [19, 22, 16, 29, 24], [20, 11, 17, 12]),
    ("n=1 vs n=1", [1.0], [2.0]),
    ("n=1 vs 10", [5.5], list(range(10))),
    ("3 vs 4 exact", latency(3, 3), latency(4, 4)),
    ("8 vs 8 exact", latency(8, 3), latency(8, 3.5)),
    ("8 vs 9 exact", latency(8, 3), latency(9, 3.2)),
    ("5 vs 20 exact", latency(5, 3), latency(20, 3)),
    ("8 vs 400 exact large", latency(8, 3.1), latency(400, 3)),
    ("9 vs 9 asymptotic", latency(9, 3), latency(9, 3.5)),
    ("ties small", [1, 2, 2, 3, 3, 3], [2, 3, 4, 4, 5]),
    ("all equal", [4.0] * 5, [4.0] * 6),
    ("integer ties 40 vs 60", ints(40, 0, 10), ints(60, 1, 12)),
    ("300 vs 250", latency(300, 3.9), latency(250, 4.0)),
    ("disjoint 30 vs 30", latency(30, 1), latency(30, 100)),
]
mwu = []
for name, x, y in mwu_cases:
    r = stats.mannwhitneyu(x, y, alternative="two-sided", method="auto")
    mwu.append({"name": name, "x": fl(x), "y": fl(y),
                "u": float(r.statistic), "p": float(r.pvalue)})

# ---- Kruskal-Wallis (scipy.stats.kruskal) ----
kw_cases = [
    ("scipy mstats doc batteries", [[6.3, 5.4, 5.7, 5.2, 5.0], [6.9, 7.0, 6.1, 7.9], [7.2, 6.9, 6.1, 6.5]]),
    ("scipy doc two groups", [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]),
    ("scipy doc ties", [[1, 1, 1], [2, 2, 2], [2, 2]]),
    ("four latency groups", [latency(50, 3.9), latency(60, 8.5), latency(40, 9.0), latency(55, 12.9)]),
    ("integer ties", [ints(30, 0, 5), ints(25, 1, 6), ints(35, 0, 7)]),
]
kruskal = []
for name, groups in kw_cases:
    r = stats.kruskal(*groups)
    n = sum(len(g) for g in groups)
    kruskal.append({"name": name, "groups": [fl(g) for g in groups],
                    "h": float(r.statistic), "p": float(r.pvalue),
                    "epsilon2": float(r.statistic) / (n - 1)})

# ---- Holm and Bonferroni (R p.adjust) ----
padj_cases = [
    [0.01, 0.02, 0.03, 0.04, 0.05],
    [0.04, 0.001, 0.2, 0.001, 0.5, 0.03],
    [1e-12, 0.8, 0.0125],
    [0.3],
]
padjust = []
for p in padj_cases:
    v = rscript("p <- %s; cat(sprintf('%%.17g', c(p.adjust(p, 'holm'), p.adjust(p, 'bonferroni'))), sep='\\n')" % rvec(p))
    padjust.append({"p": fl(p), "holm": v[:len(p)], "bonferroni": v[len(p):]})

# ---- Descriptive statistics (NumPy: mean, std ddof=1, percentile linear = R type 7) ----
desc_cases = [
    ("n=1", [3.25]),
    ("n=2", [1.0, 2.0]),
    ("latency 101", latency(101, 3.9)),
    ("latency 1000 large offset", latency(1000, 1e6, 2.0)),
    ("integer ties", ints(37, 0, 4)),
]
describe = []
for name, x in desc_cases:
    a = np.asarray(x, dtype=float)
    q = np.percentile(a, [25, 50, 75, 95, 99])
    sd = float(np.std(a, ddof=1)) if len(a) > 1 else None
    describe.append({"name": name, "x": fl(a), "n": len(a), "mean": float(np.mean(a)),
                     "sd": sd, "min": float(a.min()), "max": float(a.max()),
                     "median": float(np.median(a)), "q1": float(q[0]), "q3": float(q[2]),
                     "p95": float(q[3]), "p99": float(q[4])})
# R type 7 agrees with NumPy's default; record R's too as a second oracle.
for d in describe:
    v = rscript("x <- %s; cat(sprintf('%%.17g', quantile(x, c(.25,.5,.75,.95,.99), type=7, names=FALSE)), sep='\\n')" % rvec(d["x"]))
    d["r_type7"] = v

# ---- Hodges-Lehmann shift and interval (R wilcox.test(y, x, conf.int=TRUE)) ----
hl_cases = [
    ("exact 10 vs 12", latency(10, 3.9), latency(12, 8.5)),
    ("exact 5 vs 7", latency(5, 3.0), latency(7, 3.1)),
    ("exact 49 vs 30", latency(49, 3.9), latency(30, 4.2)),
    ("exact 3 vs 3", [1.5, 2.25, 3.0], [2.0, 4.5, 3.75]),
    ("asymptotic 60 vs 80", latency(60, 3.9), latency(80, 4.4)),
    ("asymptotic 200 vs 150", latency(200, 3.9), latency(150, 3.95)),
    ("asymptotic ties", np.round(latency(40, 3.9), 1), np.round(latency(45, 4.3), 1)),
]
hodges = []
for name, x, y in hl_cases:
    v = rscript("x <- %s; y <- %s; r <- suppressWarnings(wilcox.test(y, x, conf.int=TRUE, conf.level=0.95)); "
                "cat(sprintf('%%.17g', c(r$estimate, r$conf.int)), sep='\\n')" % (rvec(x), rvec(y)))
    ties = len(np.unique(np.r_[x, y])) < len(x) + len(y)
    exact = len(x) < 50 and len(y) < 50 and not ties
    hodges.append({"name": name, "x": fl(x), "y": fl(y), "exact": bool(exact),
                   "estimate": v[0], "lower": v[1], "upper": v[2],
                   "median_of_differences": float(np.median(np.subtract.outer(np.asarray(y), np.asarray(x))))})

# ---- Cliff's delta: brute-force dominance matrix in R with the
# formulas of effsize::cliff.delta's defaults (use.unbiased=TRUE,
# use.normal=FALSE): Cliff's unbiased variance, Student t quantile with
# n1+n2-2 df (Feng and Cliff 2004), asymmetric interval. ----
CLIFF_R = r"""
x <- %s; y <- %s
dm <- sign(outer(y, x, "-")); n1 <- length(y); n2 <- length(x)
d <- mean(dm); dd <- if (abs(d) == 1) d * (n1*n2-1)/(n1*n2) else d
S <- (n2^2 * sum((rowMeans(dm) - dd)^2) + n1^2 * sum((colMeans(dm) - dd)^2) - sum((dm - dd)^2)) /
     (n1 * n2 * (n1 - 1) * (n2 - 1))
Z <- qt(0.975, n1 + n2 - 2)
lo <- (dd - dd^3 - Z*sqrt(S)*sqrt((1-dd^2)^2 + Z^2*S)) / (1 - dd^2 + Z^2*S)
hi <- (dd - dd^3 + Z*sqrt(S)*sqrt((1-dd^2)^2 + Z^2*S)) / (1 - dd^2 + Z^2*S)
if (d == 1) hi <- 1
if (d == -1) lo <- -1
a12 <- mean(outer(y, x, ">")) + 0.5 * mean(outer(y, x, "=="))
cat(sprintf('%%.17g', c(d, S, lo, hi, a12)), sep='\n')
"""
cliff_cases = [
    ("effsize doc treatment/control", [10, 20, 30, 40, 40, 50], [10, 10, 20, 20, 20, 30, 30, 30, 40, 50]),
    ("effsize negligible", [10, 20, 30, 40, 40, 50], [10, 20, 20, 20, 30, 30, 30, 40, 50, 100]),
    ("disjoint", [1, 2, 3, 4], [10, 11, 12]),
    ("latency 40 vs 55", latency(40, 3.9), latency(55, 4.3)),
    ("integer ties 80 vs 70", ints(80, 0, 10), ints(70, 2, 12)),
]
cliff = []
for name, x, y in cliff_cases:
    v = rscript(CLIFF_R % (rvec(x), rvec(y)))
    cliff.append({"name": name, "x": fl(x), "y": fl(y), "delta": v[0], "var": v[1],
                  "lower": v[2], "upper": v[3], "a12": v[4]})

# ---- Serial dependence (statsmodels) ----
def ar1(n, phi):
    e = rs.normal(0, 1, n)
    out = np.empty(n)
    out[0] = e[0]
    for t in range(1, n):
        out[t] = phi * out[t - 1] + e[t]
    return np.round(3.9 + 0.2 * out, 6)


serial_cases = [
    ("iid 30", latency(30, 3.9), 5),
    ("ar1 0.6 n=40", ar1(40, 0.6), 8),
    ("ar1 0.3 n=200", ar1(200, 0.3), 10),
    ("iid 500", latency(500, 3.9), 20),
    ("alternating 20", [1.0, 3.0] * 10, 4),
    ("ties at median 25", ints(25, 0, 3), 3),
]
serial = []
for name, x, lags in serial_cases:
    x = np.asarray(x, dtype=float)
    z, p = runstest_1samp(x, cutoff="median", correction=True)
    r = acf(x, nlags=lags, adjusted=False, fft=False)
    q, qp = acorr_ljungbox(x, lags=[lags], return_df=False)
    serial.append({"name": name, "x": fl(x), "lags": lags, "runs_z": float(z), "runs_p": float(p),
                   "acf": fl(r), "lb_q": float(np.asarray(q)[0]), "lb_p": float(np.asarray(qp)[0])})

json.dump({
    "generator": "analysis/stats/testdata/oracle.py",
    "versions": {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
                 "statsmodels": statsmodels.__version__, "r": r_version()},
    "mannwhitneyu": mwu, "kruskal": kruskal, "p_adjust": padjust, "describe": describe,
    "hodges_lehmann": hodges, "cliff": cliff, "serial": serial,
}, sys.stdout, indent=1, sort_keys=True)
sys.stdout.write("\n")
