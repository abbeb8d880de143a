#!/usr/bin/env python3
"""Independent oracle for tlsrun.Plan's block order.

Re-implements, from the published algorithms and not from the Go code:
PCG 128-bit LCG (state = state * mul + inc mod 2^128, seeded with
state = seed1 << 64 | seed2 as Go's math/rand/v2 NewPCG does) with the DXSM
output function (O'Neill, pcg-cpp), uniform integers in [0, n) by rejection
below 2^64 mod n, and Fisher-Yates (Knuth Algorithm P) from the top down.

Prints, for a seed and a number of configurations, the configuration index
of every block of the first `rounds` rounds, one round per line.

usage: order_oracle.py SEED CONFIGS ROUNDS
"""
import sys

M64 = (1 << 64) - 1
MUL = (2549297995355413924 << 64) | 4865540595714422341
INC = (6364136223846793005 << 64) | 1442695040888963407
STREAM = 0x746C736D61747269  # "tlsmatri"


class PCG:
    def __init__(self, s1, s2):
        self.state = (s1 << 64) | s2

    def uint64(self):
        self.state = (self.state * MUL + INC) % (1 << 128)
        hi, lo = self.state >> 64, self.state & M64
        hi ^= hi >> 32
        hi = (hi * 0xDA942042E4DD58B5) & M64
        hi ^= hi >> 48
        hi = (hi * (lo | 1)) & M64
        return hi


def uniform(rng, n):
    limit = (1 << 64) % n
    while True:
        v = rng.uint64()
        if v >= limit:
            return v % n


def main():
    seed, configs, rounds = (int(a) for a in sys.argv[1:4])
    rng = PCG(seed, STREAM)
    for _ in range(rounds):
        a = list(range(configs))
        for i in range(configs - 1, 0, -1):
            j = uniform(rng, i + 1)
            a[i], a[j] = a[j], a[i]
        print(" ".join(str(x) for x in a))


if __name__ == "__main__":
    main()
