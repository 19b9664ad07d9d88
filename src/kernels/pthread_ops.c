/* pthread operations of the Golenkov et al. study (its Table 1).
 *
 *   pthread_ops [--ops LIST|all] [--load N] [--affinity on|off] [--cpus LIST]
 *               [--chain 15000] [--waiters 100,200,500,1000] [--batch 10000]
 *
 * ops: create, create_join, chain (create+join along a chain of threads: each
 * thread joins its creator and creates the next), mutex_init, mutex_destroy,
 * mutex_lock, mutex_unlock (per operation, over a batch), wake (the time to
 * wake N threads blocked on a condition variable until all have run).
 * --load N keeps N busy threads running meanwhile; with --affinity on every
 * thread is pinned, round-robin over --cpus (default: the CPUs this process
 * may use), the measuring thread on the first. Output: one `result` line per
 * measurement (time_s per operation) and a `check` line per op: the
 * operations really happened (threads ran, counters add up).
 */
#define _GNU_SOURCE
#include "kargs.h"
#include "statloop.h"

#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STACK (64 * 1024)
#define MAX_WAITERS 16

static const char *const OPS[] = {"create", "create_join", "chain", "mutex_init", "mutex_destroy",
                                  "mutex_lock", "mutex_unlock", "wake", NULL};
enum { OP_CREATE, OP_CREATE_JOIN, OP_CHAIN, OP_INIT, OP_DESTROY, OP_LOCK, OP_UNLOCK, OP_WAKE, NOPS };

static int affinity, ncpus, *cpus, next_cpu;
static long chain_len = 15000, batch = 10000;
static atomic_long ran;                 /* threads that really ran */

/* Attributes of a new thread: small stack, and the next CPU when pinning. */
static void thread_attr(pthread_attr_t *a) {
    pthread_attr_init(a);
    pthread_attr_setstacksize(a, STACK);
    if (affinity) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[next_cpu++ % ncpus], &set);
        pthread_attr_setaffinity_np(a, sizeof set, &set);
    }
}

static void spawn(pthread_t *t, void *(*fn)(void *), void *arg) {
    pthread_attr_t a;
    thread_attr(&a);
    int rc = pthread_create(t, &a, fn, arg);
    pthread_attr_destroy(&a);
    if (rc) { fprintf(stderr, "pthread_ops: pthread_create failed: %s\n", strerror(rc)); exit(1); }
}

static void *noop(void *arg) { (void)arg; atomic_fetch_add(&ran, 1); return NULL; }

/* ---- background load ---- */
static atomic_int stop_load;
static void *busy(void *arg) {
    (void)arg;
    volatile unsigned long x = 0;
    while (!atomic_load_explicit(&stop_load, memory_order_relaxed)) x++;
    return NULL;
}

/* ---- create / create_join: the same steps, the clock stops before or after the join ---- */
static double time_create(int include_join) {
    pthread_t t;
    pthread_attr_t a;
    thread_attr(&a);
    double t0 = sl_now();
    pthread_create(&t, &a, noop, NULL);
    double dt = include_join ? 0 : sl_now() - t0;
    pthread_join(t, NULL);
    if (include_join)
        dt = sl_now() - t0;
    pthread_attr_destroy(&a);
    return dt;
}

static double s_create(void *p) { (void)p; return time_create(0); }
static double s_create_join(void *p) { (void)p; return time_create(1); }

/* ---- chain: thread k joins thread k-1 (its creator), then creates k+1 ---- */
typedef struct { pthread_t prev; long left; pthread_t *last; pthread_mutex_t *m; pthread_cond_t *c; int *done; } link_arg;

static void *chain_link(void *p) {
    link_arg *a = p;
    pthread_join(a->prev, NULL);
    atomic_fetch_add(&ran, 1);
    if (--a->left > 0) {
        a->prev = pthread_self();
        pthread_t next;
        spawn(&next, chain_link, a);
    } else {
        pthread_mutex_lock(a->m);
        *a->last = pthread_self();
        *a->done = 1;
        pthread_cond_signal(a->c);
        pthread_mutex_unlock(a->m);
    }
    return NULL;
}

static void *chain_head(void *p) { (void)p; return NULL; }

static double s_chain(void *p) {
    (void)p;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t c = PTHREAD_COND_INITIALIZER;
    int done = 0;
    pthread_t last, first;
    link_arg a = {0, chain_len, &last, &m, &c, &done};
    double t0 = sl_now();
    spawn(&a.prev, chain_head, NULL);
    spawn(&first, chain_link, &a);
    pthread_mutex_lock(&m);
    while (!done) pthread_cond_wait(&c, &m);
    pthread_mutex_unlock(&m);
    pthread_join(last, NULL);
    return (sl_now() - t0) / (double)chain_len;
}

/* ---- mutexes, per operation over a batch ---- */
static pthread_mutex_t *mx;
static long counter;

static double s_init(void *p) {
    (void)p;
    double t0 = sl_now();
    for (long i = 0; i < batch; i++) pthread_mutex_init(&mx[i], NULL);
    double dt = sl_now() - t0;
    for (long i = 0; i < batch; i++) pthread_mutex_destroy(&mx[i]);
    return dt / (double)batch;
}

static double s_destroy(void *p) {
    (void)p;
    for (long i = 0; i < batch; i++) pthread_mutex_init(&mx[i], NULL);
    double t0 = sl_now();
    for (long i = 0; i < batch; i++) pthread_mutex_destroy(&mx[i]);
    return (sl_now() - t0) / (double)batch;
}

static double s_lock(void *p) {
    (void)p;
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    double t0 = sl_now();
    for (long i = 0; i < batch; i++) { pthread_mutex_lock(&mx[i]); counter++; }
    double dt = sl_now() - t0;
    for (long i = 0; i < batch; i++) pthread_mutex_unlock(&mx[i]);
    (void)m;
    return dt / (double)batch;
}

static double s_unlock(void *p) {
    (void)p;
    for (long i = 0; i < batch; i++) { pthread_mutex_lock(&mx[i]); counter++; }
    double t0 = sl_now();
    for (long i = 0; i < batch; i++) pthread_mutex_unlock(&mx[i]);
    return (sl_now() - t0) / (double)batch;
}

/* ---- wake N blocked threads ---- */
typedef struct {
    pthread_mutex_t m;
    pthread_cond_t go, done;
    long gen, waiting, woken, total_woken, n;
    int stop;
} wake_state;

static void *waiter(void *p) {
    wake_state *w = p;
    pthread_mutex_lock(&w->m);
    long mygen = w->gen;
    for (;;) {
        if (++w->waiting == w->n) pthread_cond_signal(&w->done);
        while (w->gen == mygen && !w->stop) pthread_cond_wait(&w->go, &w->m);
        if (w->stop) break;
        mygen = w->gen;
        w->total_woken++;
        if (++w->woken == w->n) pthread_cond_signal(&w->done);
    }
    pthread_mutex_unlock(&w->m);
    return NULL;
}

static double s_wake(void *p) {
    wake_state *w = p;
    pthread_mutex_lock(&w->m);
    while (w->waiting < w->n) pthread_cond_wait(&w->done, &w->m);
    w->waiting = 0;
    w->woken = 0;
    double t0 = sl_now();
    w->gen++;
    pthread_cond_broadcast(&w->go);
    while (w->woken < w->n) pthread_cond_wait(&w->done, &w->m);
    double dt = sl_now() - t0;
    pthread_mutex_unlock(&w->m);
    return dt;
}

static void report(const char *op, int load, long extra, const sl_result *r) {
    printf("result kernel=pthread_ops op=%s load=%d affinity=%s waiters=%ld time_s=%.9g",
           op, load, affinity ? "on" : "off", extra, r->mean);
    sl_print_fields(r);
    putchar('\n');
}

static void check(const char *op, long expected, long got) {
    printf("check kernel=pthread_ops op=%s expected=%ld got=%ld ok=%d\n", op, expected, got, expected == got);
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    static const char *const onoff[] = {"off", "on", NULL};
    static struct option opts[] = {
        {"ops", 1, 0, 'o'}, {"load", 1, 0, 'l'}, {"affinity", 1, 0, 'a'}, {"cpus", 1, 0, 'c'},
        {"chain", 1, 0, 'C'}, {"waiters", 1, 0, 'w'}, {"batch", 1, 0, 'b'}, {0, 0, 0, 0}};
    int want[NOPS] = {0}, any = 0, load = 0, opt;
    size_t waiters[MAX_WAITERS] = {100, 200, 500, 1000};
    int nwaiters = 4;
    cpu_set_t allowed;
    sched_getaffinity(0, sizeof allowed, &allowed);
    cpus = malloc(CPU_SETSIZE * sizeof *cpus);
    for (int c = 0; c < CPU_SETSIZE; c++) if (CPU_ISSET(c, &allowed)) cpus[ncpus++] = c;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'o': {
            char *copy = strdup(optarg), *save = NULL;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                if (strcmp(tok, "all") == 0) { for (int i = 0; i < NOPS; i++) want[i] = 1; }
                else want[ka_choice("--ops entry", tok, (const char *const *)OPS)] = 1;
                any = 1;
            }
            free(copy);
            break;
        }
        case 'l': load = (int)ka_long("--load (busy threads)", optarg, 0, 4096); break;
        case 'a': affinity = ka_choice("--affinity", optarg, onoff); break;
        case 'c': {
            char *copy = strdup(optarg), *save = NULL;
            ncpus = 0;
            for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
                long c = ka_long("--cpus entry", tok, 0, CPU_SETSIZE - 1);
                if (!CPU_ISSET(c, &allowed)) ka_die("--cpus names CPU %ld, which this process may not use", c);
                cpus[ncpus++] = (int)c;
            }
            free(copy);
            if (!ncpus) ka_die("--cpus must list CPUs like 0,1,2");
            break;
        }
        case 'C': chain_len = ka_long("--chain (threads in the chain)", optarg, 1, 10000000); break;
        case 'w': {
            size_t tmp[MAX_WAITERS];
            nwaiters = ka_size_list("--waiters", optarg, tmp, MAX_WAITERS, 1, 100000);
            memcpy(waiters, tmp, sizeof tmp);
            break;
        }
        case 'b': batch = ka_long("--batch", optarg, 1, 100000000); break;
        default: ka_die("usage: pthread_ops [--ops LIST|all] [--load N] [--affinity on|off] [--cpus LIST] "
                        "[--chain N] [--waiters LIST] [--batch N]");
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    if (!any) for (int i = 0; i < NOPS; i++) want[i] = 1;
    if (affinity) {   /* the measuring thread takes the first CPU */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[next_cpu++ % ncpus], &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    }
    pthread_t *loaders = calloc((size_t)load + 1, sizeof *loaders);
    for (int i = 0; i < load; i++) spawn(&loaders[i], busy, NULL);
    int corrupt = ka_corrupt();
    sl_config cfg = sl_default_config();
    mx = malloc((size_t)batch * sizeof *mx);
    for (int op = 0; op < NOPS; op++) {
        if (!want[op]) continue;
        if (op == OP_WAKE) {
            for (int k = 0; k < nwaiters; k++) {
                wake_state w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
                                PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, (long)waiters[k], 0};
                pthread_t *ts = malloc(waiters[k] * sizeof *ts);
                for (size_t i = 0; i < waiters[k]; i++) spawn(&ts[i], waiter, &w);
                double *samples = NULL;
                sl_result r = sl_measure(&cfg, s_wake, &w, &samples);
                long rounds_total = 0;   /* wake-ups expected over every round */
                for (int rd = 0; rd < r.rounds; rd++) rounds_total += (long)cfg.first_iters << rd;
                pthread_mutex_lock(&w.m);
                w.stop = 1;
                pthread_cond_broadcast(&w.go);
                pthread_mutex_unlock(&w.m);
                for (size_t i = 0; i < waiters[k]; i++) pthread_join(ts[i], NULL);
                report("wake", load, (long)waiters[k], &r);
                check("wake", rounds_total * (long)waiters[k], w.total_woken - corrupt);
                free(ts); free(samples);
            }
            continue;
        }
        static sl_func fns[] = {s_create, s_create_join, s_chain, s_init, s_destroy, s_lock, s_unlock};
        atomic_store(&ran, 0);
        counter = 0;
        sl_result r = sl_measure(&cfg, fns[op], NULL, NULL);
        long calls = 0;
        for (int rd = 0; rd < r.rounds; rd++) calls += (long)cfg.first_iters << rd;
        report(OPS[op], load, 0, &r);
        long expected = 0, got = 0;
        if (op == OP_CREATE || op == OP_CREATE_JOIN) { expected = calls; got = atomic_load(&ran); }
        else if (op == OP_CHAIN) { expected = calls * chain_len; got = atomic_load(&ran); }
        else if (op == OP_LOCK || op == OP_UNLOCK) { expected = calls * batch; got = counter; }
        check(OPS[op], expected, got - corrupt);
    }
    atomic_store(&stop_load, 1);
    for (int i = 0; i < load; i++) pthread_join(loaders[i], NULL);
    printf("config kernel=pthread_ops load=%d affinity=%s cpus=%d chain=%ld batch=%ld\n",
           load, affinity ? "on" : "off", ncpus, chain_len, batch);
    return 0;
}
