/* Statistics and rounds of the shared measurement loop (see statloop.h). */
#include "statloop.h"
#include "kargs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double sl_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *sl_criterion_name(sl_criterion c) {
    static const char *names[] = {"chi2", "spread", "window", "unreliable"};
    return names[c];
}

sl_config sl_default_config(void) {
    sl_config c = {16, 6, 0.05, 0.02, 0.80};
    c.first_iters = (size_t)ka_env_long("STATLOOP_ITERS", 16, 2, 1L << 24);
    c.max_rounds = (int)ka_env_long("STATLOOP_ROUNDS", 6, 1, 20);
    c.alpha = ka_env_double("STATLOOP_ALPHA", 0.05, 1e-6, 0.5);
    return c;
}

double sl_mean(const double *x, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += x[i];
    return n ? s / (double)n : NAN;
}

double sl_stddev(const double *x, size_t n) {
    if (n < 2) return 0.0;
    double m = sl_mean(x, n), s = 0.0;
    for (size_t i = 0; i < n; i++) s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (double)(n - 1));
}

/* Sturges' rule, at least 4 bins so that dof = bins - 3 >= 1. */
int sl_bins(size_t n) {
    int k = (int)ceil(log2((double)n)) + 1;
    return k < 4 ? 4 : k;
}

/* Regularized upper incomplete gamma Q(a, x) (series / continued fraction). */
static double gammq(double a, double x) {
    if (x <= 0.0) return 1.0;
    double gln = lgamma(a);
    if (x < a + 1.0) {
        double ap = a, del = 1.0 / a, sum = del;
        for (int i = 0; i < 10000; i++) {
            ap += 1.0; del *= x / ap; sum += del;
            if (fabs(del) < fabs(sum) * 1e-16) break;
        }
        return 1.0 - sum * exp(-x + a * log(x) - gln);
    }
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 10000; i++) {
        double an = -i * (i - a);
        b += 2.0;
        d = an * d + b; if (fabs(d) < tiny) d = tiny;
        c = b + an / c; if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-16) break;
    }
    return exp(-x + a * log(x) - gln) * h;
}

double sl_chi2_sf(double stat, int dof) {
    return dof < 1 ? NAN : gammq(0.5 * dof, 0.5 * stat);
}

static double norm_cdf(double z) { return 0.5 * erfc(-z / sqrt(2.0)); }

/* Equal-width bins over [min, max], the outer bins open to +-infinity for the
 * expected counts; observed counts as numpy.histogram makes them. */
sl_chi2 sl_chi2_normal(const double *x, size_t n) {
    sl_chi2 r = {NAN, 0.0, sl_bins(n), 0};
    r.dof = r.bins - 3;
    double m = sl_mean(x, n), s = sl_stddev(x, n);
    double lo = x[0], hi = x[0];
    for (size_t i = 1; i < n; i++) { if (x[i] < lo) lo = x[i]; if (x[i] > hi) hi = x[i]; }
    if (n < 8 || !(s > 0.0) || hi <= lo) {
        /* too few samples, or all equal: nothing to test (spread decides) */
        r.stat = NAN; r.p = 0.0;
        return r;
    }
    int k = r.bins;
    size_t *obs = calloc((size_t)k, sizeof *obs);
    double w = (hi - lo) / k;
    for (size_t i = 0; i < n; i++) {
        int b = (int)((x[i] - lo) / w);
        if (b >= k) b = k - 1;
        if (b < 0) b = 0;
        /* numpy puts values on an inner edge into the upper bin */
        obs[b]++;
    }
    double stat = 0.0;
    for (int b = 0; b < k; b++) {
        double a = b == 0 ? 0.0 : norm_cdf((lo + b * w - m) / s);
        double c = b == k - 1 ? 1.0 : norm_cdf((lo + (b + 1) * w - m) / s);
        double e = (double)n * (c - a);
        if (e <= 0.0) e = 1e-300;
        stat += ((double)obs[b] - e) * ((double)obs[b] - e) / e;
    }
    free(obs);
    r.stat = stat;
    r.p = sl_chi2_sf(stat, r.dof);
    return r;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Narrowest window of ceil(share * n) consecutive sorted samples passing chi2. */
int sl_window(const sl_config *cfg, const double *x, size_t n, double *lo, double *hi) {
    size_t m = (size_t)ceil(cfg->window_share * (double)n - 1e-9);
    if (m < 8 || m > n) return 0;
    double *s = malloc(n * sizeof *s);
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    size_t nw = n - m + 1;
    size_t *order = malloc(nw * sizeof *order);
    for (size_t i = 0; i < nw; i++) order[i] = i;
    /* insertion sort of window starts by width: nw is small */
    for (size_t i = 1; i < nw; i++) {
        size_t v = order[i], j = i;
        double wv = s[v + m - 1] - s[v];
        while (j > 0 && s[order[j - 1] + m - 1] - s[order[j - 1]] > wv) { order[j] = order[j - 1]; j--; }
        order[j] = v;
    }
    int found = 0;
    for (size_t i = 0; i < nw && !found; i++) {
        sl_chi2 c = sl_chi2_normal(s + order[i], m);
        if (c.p >= cfg->alpha) {
            found = 1; *lo = s[order[i]]; *hi = s[order[i] + m - 1];
        }
    }
    free(order); free(s);
    return found;
}

sl_result sl_judge(const sl_config *cfg, const double *x, size_t n) {
    sl_result r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.mean = sl_mean(x, n);
    r.stddev = sl_stddev(x, n);
    r.min = r.max = n ? x[0] : NAN;
    for (size_t i = 1; i < n; i++) { if (x[i] < r.min) r.min = x[i]; if (x[i] > r.max) r.max = x[i]; }
    r.window_lo = r.window_hi = NAN;
    r.chi2 = sl_chi2_normal(x, n);
    if (r.chi2.p >= cfg->alpha) r.criterion = SL_CHI2;
    else if (r.mean != 0.0 && r.stddev / fabs(r.mean) <= cfg->max_spread) r.criterion = SL_SPREAD;
    else if (sl_window(cfg, x, n, &r.window_lo, &r.window_hi)) r.criterion = SL_WINDOW;
    else r.criterion = SL_UNRELIABLE;
    return r;
}

sl_result sl_measure(const sl_config *cfg, sl_func fn, void *ctx, double **samples_out) {
    size_t n = cfg->first_iters;
    double *x = NULL;
    sl_result r;
    memset(&r, 0, sizeof r);
    for (int round = 1; round <= cfg->max_rounds; round++, n *= 2) {
        free(x);
        x = malloc(n * sizeof *x);
        if (!x) { fprintf(stderr, "statloop: out of memory for %zu samples\n", n); exit(1); }
        for (size_t i = 0; i < n; i++) x[i] = fn(ctx);
        r = sl_judge(cfg, x, n);
        r.rounds = round;
        if (r.criterion != SL_UNRELIABLE) break;
    }
    if (samples_out) *samples_out = x; else free(x);
    return r;
}

void sl_print_fields(const sl_result *r) {
    printf(" mean_s=%.9g stddev_s=%.9g min_s=%.9g max_s=%.9g n=%zu rounds=%d criterion=%s",
           r->mean, r->stddev, r->min, r->max, r->n, r->rounds,
           sl_criterion_name(r->criterion));
}
