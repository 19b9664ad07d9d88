/* OpenMP dense matrix multiply of the Comet Lake affinity report.
 *
 *   matmul [--n 1000] [--reps 50]
 *
 * C = A * B with A[i][k] = (i + 2k) % 7 - 2 and B[k][j] = (3k + j) % 5 - 1:
 * small integers, so every C entry is exact in double. Two checksums,
 * sum(C) and sum_ij C_ij w_j with w_j = j % 3 + 1, are compared with their
 * values computed independently in O(n^2) from the column sums of A.
 * Every repetition is timed and printed (`sample` lines, for boxplots); the summary `result` line judges them with
 * the shared statistics. KERNEL_CORRUPT=1 adds 1 to one entry of C.
 */
#include "kargs.h"
#include "statloop.h"

#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void multiply(int n, const double *restrict a, const double *restrict b, double *restrict c) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
        double *ci = c + (size_t)i * n;
        for (int j = 0; j < n; j++) ci[j] = 0.0;
        for (int k = 0; k < n; k++) {
            double aik = a[(size_t)i * n + k];
            const double *bk = b + (size_t)k * n;
#pragma omp simd
            for (int j = 0; j < n; j++) ci[j] += aik * bk[j];
        }
    }
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    static struct option opts[] = {{"n", 1, 0, 'n'}, {"reps", 1, 0, 'r'}, {0, 0, 0, 0}};
    int n = 1000, reps = 50, opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'n': n = (int)ka_long("--n (matrix order)", optarg, 1, 40000); break;
        case 'r': reps = (int)ka_long("--reps", optarg, 1, 100000); break;
        default: ka_die("usage: matmul [--n ORDER] [--reps COUNT]");
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    size_t nn = (size_t)n * n;
    double *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *c = malloc(nn * sizeof *c);
    if (!a || !b || !c) ka_die("cannot allocate three %dx%d matrices: choose a smaller --n", n, n);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++) {
            a[(size_t)i * n + k] = (double)((i + 2 * k) % 7 - 2);
            b[(size_t)i * n + k] = (double)((3 * i + k) % 5 - 1);
        }
    double expected = 0.0, expected_w = 0.0;
    for (int k = 0; k < n; k++) {
        double ca = 0.0, rb = 0.0, rbw = 0.0;
        for (int i = 0; i < n; i++) {
            ca += a[(size_t)i * n + k];
            rb += b[(size_t)k * n + i];
            rbw += b[(size_t)k * n + i] * (i % 3 + 1);
        }
        expected += ca * rb;
        expected_w += ca * rbw;
    }
    double *t = malloc((size_t)reps * sizeof *t);
    int threads = omp_get_max_threads();
    for (int r = 0; r < reps; r++) {
        double t0 = sl_now();
        multiply(n, a, b, c);
        t[r] = sl_now() - t0;
        printf("sample kernel=matmul n=%d threads=%d rep=%d time_s=%.9g\n", n, threads, r, t[r]);
    }
    if (ka_corrupt()) c[nn / 2] += 1.0;
    double sum = 0.0, sum_w = 0.0;
    for (size_t i = 0; i < nn; i++) { sum += c[i]; sum_w += c[i] * (double)(i % (size_t)n % 3 + 1); }
    sl_config cfg = sl_default_config();
    sl_result res = sl_judge(&cfg, t, (size_t)reps);
    res.rounds = 1;
    printf("result kernel=matmul n=%d threads=%d reps=%d gflops=%.6g", n, threads, reps,
           2.0 * n * (double)nn / res.mean / 1e9);
    sl_print_fields(&res);
    printf("\ncheck kernel=matmul checksum=%.17g expected=%.17g weighted=%.17g expected_weighted=%.17g ok=%d\n",
           sum, expected, sum_w, expected_w, sum == expected && sum_w == expected_w);
    free(a); free(b); free(c); free(t);
    return 0;
}
