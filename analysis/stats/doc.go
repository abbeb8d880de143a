// Package stats holds the nonparametric statistics that the three studies
// rest on, as pure functions over []float64 samples.
//
// Every function follows one named reference implementation, so that a
// reader can reproduce each number with a tool they trust. The golden
// values in testdata/ were produced by those tools (SciPy 1.10.1,
// statsmodels 0.13.5 and R 4.2.2 from Debian bookworm) and the tests
// require agreement to 1e-9 relative wherever the method is the same.
//
// Conventions (state them in the paper):
//
//   - Quantiles: R type 7 (NumPy's default "linear"): for sorted x of
//     length n and probability p, h = (n-1)p, Q(p) = x[floor h] +
//     (h - floor h)(x[floor h + 1] - x[floor h]).
//   - Standard deviation: sample sd with divisor n-1; CV = sd/mean.
//   - Mann-Whitney U: two-sided, scipy.stats.mannwhitneyu(x, y,
//     method='auto') of SciPy 1.10: exact null distribution when either
//     sample has at most 8 values and the pooled sample has no ties, else
//     the normal approximation with tie correction and continuity
//     correction.
//   - Kruskal-Wallis H with tie correction (scipy.stats.kruskal);
//     epsilon-squared = H/(n-1) (Tomczak and Tomczak 2014).
//   - Holm (step-down, not Holm-Sidak) and Bonferroni adjustment, as R's
//     p.adjust.
//   - Cliff's delta d = P(Y>X) - P(Y<X) with Cliff's (1993, 1996) unbiased
//     variance estimate and asymmetric interval, Student t quantile with
//     n+m-2 df (Feng and Cliff 2004): effsize::cliff.delta's defaults;
//     magnitude thresholds 0.147/0.33/0.474 (Romano et al. 2006).
//   - Vargha-Delaney A12 = P(Y>X) + P(Y=X)/2 = (d+1)/2 with the Vargha and
//     Delaney (2000) thresholds 0.56/0.64/0.71 on max(A, 1-A).
//   - Hodges-Lehmann shift = median of all differences y_j - x_i, found by
//     selection without materialising them, with the distribution-free
//     interval of R's wilcox.test(y, x, conf.int=TRUE).
//   - Bootstrap percentile interval for median(Y) - median(X) from a seeded
//     PCG (math/rand/v2); the seed and the resampling method (every value,
//     or each resample's medians drawn as order statistics of uniforms,
//     the same estimator in O(1) per resample) are part of the result.
//   - Runs test about the median (statsmodels runstest_1samp(x,
//     cutoff='median', correction=True)), autocorrelation (statsmodels acf,
//     adjusted=False, fft=False) and Ljung-Box Q (statsmodels
//     acorr_ljungbox, model_df=0). Minimum n: 3 for the runs test (below
//     it var(R) = 0), k+1 for the ACF at lag k and for Ljung-Box at lag k;
//     fewer values give ErrTooFew rather than an infinite z or p = 0.
//   - Dependent series: the same diagnostics on the ranks (Ranks, SciPy's
//     rankdata 'average'), the effective sample size n/tau on ranks with
//     Geyer's (1992) initial positive sequence as the truncation rule
//     (EffectiveN), the circular block bootstrap (Politis and Romano 1992)
//     of a series' median with the block length of Politis and White
//     (2004) as corrected by Patton, Politis and White (2009), computed as
//     R's np::b.star on the ranks (BlockLength, BootstrapSeries), and the
//     between-series t interval with Cochran's Q and I^2 for an effect
//     replicated over several series (BetweenSeriesInterval; Kalibera and
//     Jones 2013). p-values are floored at PFloor = 10^-6 (FormatP).
package stats
