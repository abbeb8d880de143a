#!/usr/bin/python3
"""Hand check of stats.BlockLength (blockboot_test.go TestBlockLengthHandCase).

R's np::b.star (Politis and White 2004, corrected by Patton, Politis and
White 2009) is not packaged in Debian, so there is no oracle to run. This
script follows b.star's steps with its defaults one by one in plain Python
(no NumPy), on a series small enough to check on paper, and prints the Go
literal the test compares with:

    /usr/bin/python3 analysis/stats/testdata/blocklength_check.py
"""
import math

x = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4]
n = len(x)
kn = max(5, math.ceil(math.log10(n)))
mmax = math.ceil(math.sqrt(n)) + kn
bmax = math.ceil(min(3 * math.sqrt(n), n / 3))
c = 1.959963984540054  # qnorm(0.975)
m = sum(x) / n
R = [sum((x[t] - m) * (x[t - k] - m) for t in range(k, n)) / n for k in range(mmax + 1)]
rho = [R[k] / R[0] for k in range(mmax + 1)]
crit = c * math.sqrt(math.log10(n) / n)
mhat = None
for j in range(1, mmax - kn + 2):
    if all(abs(rho[k]) < crit for k in range(j, j + kn)):
        mhat = j
        break
if mhat is None:
    sig = [k for k in range(1, mmax + 1) if abs(rho[k]) >= crit]
    mhat = max(sig) if sig else mmax
M = min(2 * mhat, mmax)


def lam(s):
    s = abs(s)
    return 1.0 if s < 0.5 else (2 * (1 - s) if s <= 1 else 0.0)


G = sum(lam(k / M) * abs(k) * R[abs(k)] for k in range(-M, M + 1))
g = sum(lam(k / M) * R[abs(k)] for k in range(-M, M + 1))
bcb = (2 * G * G / (4 / 3 * g * g)) ** (1 / 3) * n ** (1 / 3)
bsb = (2 * G * G / (2 * g * g)) ** (1 / 3) * n ** (1 / 3)
clamp = lambda b: bmax if b > bmax else (1 if b < 1 else round(b))
print("// n=%d K_N=%d m_max=%d b_max=%d crit=%.4f rho=%s" % (n, kn, mmax, bmax, crit, [round(r, 4) for r in rho[1:]]))
print("var blockLengthHand = BlockLengthResult{Circular: %d, Stationary: %d, CircularRaw: %r, StationaryRaw: %r, M: %d, MHat: %d, MMax: %d, Max: %d}"
      % (clamp(bcb), clamp(bsb), bcb, bsb, M, mhat, mmax, bmax))
