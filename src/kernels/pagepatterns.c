/* Memory access patterns known by construction, to validate the page sampler (pagesample.c).
 *
 *   pagepatterns --pattern private|shared|pairs|firsttouch [--threads 4] [--pages 16]
 *                [--ms 500 | --passes N] [--alloc mmap|malloc]
 *
 * Thread t is the t-th thread created (main is 0), as the sampler numbers them;
 * every thread touches every double of each page it uses, over and over, until
 * --ms milliseconds have passed, or --passes times: with --passes each thread
 * does the same work whatever the scheduler does, so that on a loaded machine
 * the truth of a shared page is still equal shares (with --ms a starved thread
 * does less):
 *   private     thread t uses only its own --pages pages (and first touches them);
 *   shared      every thread uses one and the same page;
 *   pairs       threads 2k and 2k+1 (a producer writing, a consumer reading) share
 *               --pages pages of their own; an odd last thread has private pages;
 *   firsttouch  thread 0 writes all --threads x --pages pages, then every thread
 *               reads all of them.
 * Prints one `pattern` line with the settings and a checksum.
 */
#define _GNU_SOURCE
#include "kargs.h"

#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { PRIVATE, SHARED, PAIRS, FIRSTTOUCH };

typedef struct {
    int pattern, threads, t;
    long pages, words, passes; /* pages per owner, doubles per page, passes (0: until deadline) */
    double *mem, deadline, sum;
    pthread_barrier_t *start;
} worker;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The first page and the page count thread t uses. */
static void span(const worker *w, long *first, long *count) {
    switch (w->pattern) {
    case PRIVATE: *first = w->t * w->pages; *count = w->pages; break;
    case SHARED: *first = 0; *count = 1; break;
    case PAIRS: *first = (w->t / 2) * w->pages; *count = w->pages; break;
    default: *first = 0; *count = w->threads * w->pages; break;
    }
}

static void *run(void *p) {
    worker *w = p;
    long first, count;
    span(w, &first, &count);
    double *a = w->mem + first * w->words;
    long n = count * w->words;
    int reader = w->pattern == FIRSTTOUCH || (w->pattern == PAIRS && w->t % 2 == 1);
    if (w->pattern == PRIVATE || (w->pattern == PAIRS && !reader))
        for (long i = 0; i < n; i++) a[i] = 1.0; /* the owner (or producer) touches first */
    pthread_barrier_wait(w->start);
    volatile double *v = a;
    double s = 0.0;
    for (long k = 0; w->passes ? k < w->passes : now() < w->deadline; k++) {
        if (reader) for (long i = 0; i < n; i++) s += v[i];
        else for (long i = 0; i < n; i++) v[i] += 1.0;
    }
    w->sum = s;
    return NULL;
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    static const char *const patterns[] = {"private", "shared", "pairs", "firsttouch", NULL};
    static const char *const allocs[] = {"mmap", "malloc", NULL};
    static struct option opts[] = {{"pattern", 1, 0, 'p'}, {"threads", 1, 0, 't'}, {"pages", 1, 0, 'n'},
                                   {"ms", 1, 0, 'm'}, {"alloc", 1, 0, 'a'}, {"passes", 1, 0, 'k'},
                                   {0, 0, 0, 0}};
    int pattern = PRIVATE, threads = 4, alloc = 0, opt;
    long pages = 16, ms = 500, passes = 0;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'p': pattern = ka_choice("--pattern", optarg, patterns); break;
        case 't': threads = (int)ka_long("--threads", optarg, 1, 256); break;
        case 'n': pages = ka_long("--pages", optarg, 1, 1 << 20); break;
        case 'm': ms = ka_long("--ms", optarg, 1, 3600000); break;
        case 'a': alloc = ka_choice("--alloc", optarg, allocs); break;
        case 'k': passes = ka_long("--passes", optarg, 1, 1L << 40); break;
        default: ka_die("usage: pagepatterns --pattern private|shared|pairs|firsttouch [--threads N] "
                        "[--pages N] [--ms N | --passes N] [--alloc mmap|malloc]");
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    long page = sysconf(_SC_PAGESIZE), words = page / (long)sizeof(double);
    /* at least 16 pages, so that the sampler's smallest tracked size (64 KiB) is reached */
    long total = (long)threads * pages < 16 ? 16 : (long)threads * pages;
    size_t bytes = (size_t)total * (size_t)page;
    double *mem;
    if (alloc == 0) {
        mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED) ka_die("cannot map %zu bytes: choose fewer --pages", bytes);
    } else if (posix_memalign((void **)&mem, (size_t)page, bytes) != 0) {
        ka_die("cannot allocate %zu bytes: choose fewer --pages", bytes);
    }
    if (pattern == FIRSTTOUCH)
        for (long i = 0; i < (long)threads * pages * words; i++) mem[i] = 1.0;
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)threads);
    worker *w = calloc((size_t)threads, sizeof *w);
    pthread_t *th = calloc((size_t)threads, sizeof *th);
    if (!w || !th) ka_die("out of memory for %d threads", threads);
    double deadline = now() + (double)ms / 1000.0;
    for (int t = 0; t < threads; t++)
        w[t] = (worker){pattern, threads, t, pages, words, passes, mem, deadline, 0.0, &start};
    for (int t = 1; t < threads; t++)
        if (pthread_create(&th[t], NULL, run, &w[t]) != 0) ka_die("cannot create thread %d", t);
    run(&w[0]);
    double sum = w[0].sum;
    for (int t = 1; t < threads; t++) { pthread_join(th[t], NULL); sum += w[t].sum; }
    printf("pattern name=%s threads=%d pages=%ld ms=%ld passes=%ld alloc=%s sum=%.6g\n", patterns[pattern],
           threads, pages, ms, passes, allocs[alloc], sum);
    if (alloc == 1) free(mem);
    return 0;
}
