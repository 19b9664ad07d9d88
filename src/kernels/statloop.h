/* The measurement loop of the Golenkov et al. study, shared by every kernel.
 *
 * A measured function is called once per sample. After each round the samples
 * are judged by three criteria, in order:
 *   chi2   Pearson chi-square goodness of fit to a normal distribution
 *          (mean and stddev estimated, so dof = bins - 3) has p >= alpha;
 *   spread the relative spread, sample stddev / mean, is at most 2 %;
 *   window some window of the sorted samples holding 80 % of them passes chi2.
 * The first criterion met ends the loop; otherwise the sample count doubles,
 * for at most `max_rounds` rounds (6 in the study), and the result is
 * reported as `unreliable`.
 */
#ifndef STATLOOP_H
#define STATLOOP_H

#include <stddef.h>

typedef enum { SL_CHI2 = 0, SL_SPREAD, SL_WINDOW, SL_UNRELIABLE } sl_criterion;

typedef struct {
    size_t first_iters;   /* samples in round 1 (doubling after) */
    int max_rounds;       /* at most this many rounds */
    double alpha;         /* significance level of the chi-square test */
    double max_spread;    /* relative stddev accepted by the spread criterion */
    double window_share;  /* share of samples the window criterion keeps */
} sl_config;

typedef struct {
    double stat, p;       /* chi-square statistic and its p-value */
    int bins, dof;        /* bins used, degrees of freedom (bins - 3) */
} sl_chi2;

typedef struct {
    double mean, stddev, min, max;
    size_t n;             /* samples of the final round */
    int rounds;
    sl_criterion criterion;
    sl_chi2 chi2;         /* test of the whole final round */
    double window_lo, window_hi; /* bounds of the passing window (criterion window) */
} sl_result;

/* Measured function: performs the work once and returns the sample (seconds). */
typedef double (*sl_func)(void *ctx);

/* Defaults of the study; the environment can override them
 * (STATLOOP_ITERS, STATLOOP_ROUNDS, STATLOOP_ALPHA). Exits 2 on bad values. */
sl_config sl_default_config(void);

/* Runs the rounds and judges them; `samples_out` (may be NULL) receives a
 * malloc'd copy of the final round's samples, `*n_out` their count. */
sl_result sl_measure(const sl_config *cfg, sl_func fn, void *ctx,
                     double **samples_out);

/* Judges one set of samples (no measuring): the statistics part alone. */
sl_result sl_judge(const sl_config *cfg, const double *x, size_t n);

/* The statistics, exposed for the test harness. */
double sl_mean(const double *x, size_t n);
double sl_stddev(const double *x, size_t n);              /* ddof = 1 */
int sl_bins(size_t n);                                    /* bins for n samples */
sl_chi2 sl_chi2_normal(const double *x, size_t n);        /* bins over [min, max] */
double sl_chi2_sf(double stat, int dof);                  /* survival function */
int sl_window(const sl_config *cfg, const double *x, size_t n, double *lo, double *hi);

const char *sl_criterion_name(sl_criterion c);
double sl_now(void);                                      /* monotonic seconds */

/* Prints ` mean_s=... stddev_s=... n=... rounds=... criterion=...` (no newline). */
void sl_print_fields(const sl_result *r);

#endif
