/* Test harness of the statistics: reads samples (one per line) from stdin and
 * prints every quantity the loop judges them by, for comparison with SciPy.
 * With --measure the samples are instead fed, in order, to sl_measure as the
 * values of a measured function, to test the rounds themselves. */
#include "statloop.h"
#include "kargs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const double *x; size_t n, next; } feed;

static double next_sample(void *ctx) {
    feed *f = ctx;
    if (f->next == f->n) ka_die("--measure ran out of samples after %zu", f->n);
    return f->x[f->next++];
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    int measure = argc > 1 && strcmp(argv[1], "--measure") == 0;
    if (argc > 1 && !measure) ka_die("unknown argument '%s': the only option is --measure", argv[1]);
    size_t n = 0, cap = 1024;
    double *x = malloc(cap * sizeof *x);
    while (scanf("%lf", &x[n]) == 1)
        if (++n == cap) x = realloc(x, (cap *= 2) * sizeof *x);
    if (n < 2) ka_die("stdin must hold at least 2 samples, got %zu", n);
    sl_config cfg = sl_default_config();
    sl_result r;
    if (measure) {
        feed f = {x, n, 0};
        r = sl_measure(&cfg, next_sample, &f, NULL);
        printf("rounds %d\nn %zu\nconsumed %zu\n", r.rounds, r.n, f.next);
    } else {
        r = sl_judge(&cfg, x, n);
    }
    printf("mean %.17g\nstddev %.17g\nbins %d\ndof %d\nchi2 %.17g\np %.17g\n",
           r.mean, r.stddev, r.chi2.bins, r.chi2.dof, r.chi2.stat, r.chi2.p);
    printf("criterion %s\nwindow_lo %.17g\nwindow_hi %.17g\n",
           sl_criterion_name(r.criterion), r.window_lo, r.window_hi);
    free(x);
    return 0;
}
