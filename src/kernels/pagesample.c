/* pagesample: which thread touches which page, sampled by page protection (no Pin, no PMU).
 *
 *   LD_PRELOAD=/path/libpagesample.so program [args]
 *
 * numalize (Pin) counts every access of every thread to every page; Pin cannot be
 * installed on many sites. This library samples instead: a helper thread arms
 * PAGESAMPLE_PAGES pages of the tracked memory every PAGESAMPLE_PERIOD_US, in runs of
 * PAGESAMPLE_RUN neighbours at random places
 * (mprotect PROT_NONE); the next access to an armed page faults, the SIGSEGV
 * handler counts it for the faulting thread and gives the access back. Over many
 * rounds the thread that touches an armed page first is drawn in proportion to
 * the threads' access rates to it, so the per-page counts estimate numalize's
 * shares (exclusivity is a ratio: the scale does not matter). Every tracked page
 * is armed when it is mapped, so its first touch is recorded exactly.
 *
 * Tracked memory: anonymous private read-write mmap()s and malloc/calloc/
 * realloc/aligned allocations of PAGESAMPLE_MIN_BYTES or more (the latter served
 * by their own mapping). Not tracked: static arrays (.bss), the brk heap, stacks.
 * Threads are numbered in creation order (main 0), as numalize numbers them.
 * At exit the process writes numalize's page CSV (PAGESAMPLE_OUTPUT, default
 * <program>.full.page.csv; %p is the pid) through a temporary file and a rename.
 *
 *   PAGESAMPLE_PERIOD_US  time between arming rounds (default 10000)
 *   PAGESAMPLE_PAGES      pages armed per round (default 64)
 *   PAGESAMPLE_RUN        pages armed together, side by side, one mprotect each (default 8)
 *   PAGESAMPLE_MIN_BYTES  smallest mapping or allocation tracked (default 65536)
 *   PAGESAMPLE_MAX_THREADS threads counted, T0..Tn-1 (default 64; later ones are dropped)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_REGIONS 4096
#define LOOP_LIMIT 100000 /* faults in a row on one page that is not armed: not ours */

enum { PG_IDLE, PG_ARMED, PG_BUSY, PG_OFF };

typedef struct {
    uintptr_t start;
    size_t pages;
    unsigned char *state;  /* PG_* per page */
    uint32_t *counts;      /* pages x max_threads samples */
    int32_t *first;        /* first-touch thread per page, -1: none seen */
    int alloc_thread;
    int from_malloc;
    volatile int live;
} region;

static region regions[MAX_REGIONS];
static volatile int nregions;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long page_size = 4096;
static long period_us = 10000, arm_pages = 64, arm_run_len = 8, min_bytes = 65536, max_threads = 64;
static char output[PATH_MAX];
static volatile int running, ready;
static int next_thread = 1, threads_seen = 1;
static unsigned long dropped, untracked;
static pthread_t sampler;
static struct sigaction program_segv; /* the program's own SIGSEGV handler, called for faults not ours */
static __thread int my_thread __attribute__((tls_model("initial-exec"))) = -1;
static __thread uintptr_t loop_page __attribute__((tls_model("initial-exec")));
static __thread long loop_count __attribute__((tls_model("initial-exec")));

/* ---- the kernel's calls, never the interposed ones ---- */

static void *sys_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off) {
    return (void *)syscall(SYS_mmap, a, n, prot, flags, fd, off);
}
static int sys_munmap(void *a, size_t n) { return (int)syscall(SYS_munmap, a, n); }
static int sys_mprotect(void *a, size_t n, int prot) { return (int)syscall(SYS_mprotect, a, n, prot); }
static int sys_sigaction(int sig, const struct sigaction *sa, struct sigaction *old) {
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real) real = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    return real(sig, sa, old);
}

/* ---- settings ---- */

/* A bad setting stops the program before it starts: one line, exit status 2. */
static long env_long(const char *name, long dflt, long lo, long hi) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        fprintf(stderr, "pagesample: %s='%s' is not accepted: a whole number from %ld to %ld\n", name, v, lo, hi);
        _exit(2);
    }
    return x;
}

static void set_output(void) {
    const char *pattern = getenv("PAGESAMPLE_OUTPUT");
    char exe[PATH_MAX] = "a.out", buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    if (!pattern || !*pattern) {
        const char *base = strrchr(exe, '/');
        snprintf(buf, sizeof buf, "%s.full.page.csv", base ? base + 1 : exe);
        pattern = buf;
    }
    size_t o = 0;
    for (const char *p = pattern; *p && o < sizeof output - 24; p++) {
        if (p[0] == '%' && p[1] == 'p') { o += (size_t)sprintf(output + o, "%d", (int)getpid()); p++; }
        else output[o++] = *p;
    }
    output[o] = '\0';
}

/* ---- regions ---- */

static region *find(uintptr_t a) {
    int n = nregions;
    for (int i = 0; i < n; i++) {
        region *r = &regions[i];
        if (r->live && a >= r->start && a < r->start + r->pages * (size_t)page_size) return r;
    }
    return NULL;
}

/* Tracks [p, p+len): every page armed at once, so that its first touch is seen. */
static void track(void *p, size_t len, int from_malloc) {
    if (!ready || len < (size_t)min_bytes) return;
    size_t pages = (len + (size_t)page_size - 1) / (size_t)page_size;
    size_t meta = pages + pages * (size_t)max_threads * 4 + pages * 4;
    char *m = sys_mmap(NULL, meta, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) { __atomic_fetch_add(&untracked, 1, __ATOMIC_RELAXED); return; }
    pthread_mutex_lock(&lock);
    if (nregions == MAX_REGIONS) {
        pthread_mutex_unlock(&lock);
        sys_munmap(m, meta);
        __atomic_fetch_add(&untracked, 1, __ATOMIC_RELAXED);
        return;
    }
    region *r = &regions[nregions];
    r->start = (uintptr_t)p;
    r->pages = pages;
    r->counts = (uint32_t *)m;
    r->first = (int32_t *)(m + pages * (size_t)max_threads * 4);
    r->state = (unsigned char *)(m + pages * (size_t)max_threads * 4 + pages * 4);
    memset(r->first, 0xff, pages * 4);
    memset(r->state, PG_ARMED, pages);
    r->alloc_thread = my_thread < 0 ? 0 : my_thread;
    r->from_malloc = from_malloc;
    if (sys_mprotect(p, pages * (size_t)page_size, PROT_NONE) != 0) memset(r->state, PG_IDLE, pages);
    r->live = 1;
    __atomic_store_n(&nregions, nregions + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&lock);
}

/* Gives every armed page of r its access back (the region goes, moves or is re-protected). */
static void disarm(region *r) {
    for (size_t i = 0; i < r->pages; i++)
        if (__atomic_exchange_n(&r->state[i], PG_OFF, __ATOMIC_ACQ_REL) == PG_ARMED)
            sys_mprotect((void *)(r->start + i * (size_t)page_size), (size_t)page_size, PROT_READ | PROT_WRITE);
}

static void untrack_range(uintptr_t a, size_t len) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        if (r->live && a < r->start + r->pages * (size_t)page_size && r->start < a + len) {
            r->live = 0;
            disarm(r);
        }
    }
    pthread_mutex_unlock(&lock);
}

/* ---- the fault handler ---- */

static void not_ours(int sig, siginfo_t *si, void *uc) {
    if (program_segv.sa_flags & SA_SIGINFO) {
        if (program_segv.sa_sigaction) { program_segv.sa_sigaction(sig, si, uc); return; }
    } else if (program_segv.sa_handler != SIG_DFL && program_segv.sa_handler != SIG_IGN) {
        program_segv.sa_handler(sig);
        return;
    }
    /* the default action: the access runs again and kills the process as it would have */
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    sys_sigaction(SIGSEGV, &dfl, NULL);
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr;
    region *r = find(a);
    if (!r) { not_ours(sig, si, uc); errno = saved; return; }
    size_t pg = (a - r->start) / (size_t)page_size;
    unsigned char st = __atomic_load_n(&r->state[pg], __ATOMIC_ACQUIRE);
    if (st == PG_ARMED && __atomic_compare_exchange_n(&r->state[pg], &st, PG_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        int t = my_thread < 0 ? 0 : my_thread;
        if (t < max_threads) {
            __atomic_fetch_add(&r->counts[pg * (size_t)max_threads + (size_t)t], 1, __ATOMIC_RELAXED);
            int32_t none = -1;
            __atomic_compare_exchange_n(&r->first[pg], &none, t, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        } else {
            __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED);
        }
        uintptr_t base = r->start + pg * (size_t)page_size;
        if (sys_mprotect((void *)base, (size_t)page_size, PROT_READ | PROT_WRITE) != 0) {
            /* no room for one more mapping (vm.max_map_count): the region goes untracked */
            r->live = 0;
            disarm(r);
        }
        __atomic_store_n(&r->state[pg], PG_IDLE, __ATOMIC_RELEASE);
        loop_count = 0;
    } else if (st == PG_OFF) {
        not_ours(sig, si, uc);
    } else if (a / (size_t)page_size == loop_page && ++loop_count > LOOP_LIMIT) {
        not_ours(sig, si, uc); /* another thread gives the page back: retry, unless it never does */
    } else if (a / (size_t)page_size != loop_page) {
        loop_page = a / (size_t)page_size;
        loop_count = 0;
    }
    errno = saved;
}

/* ---- the sampler thread ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

/* Arms pages [x, x+n) of r that are idle, one mprotect per stretch of them. */
static void arm_run(region *r, size_t x, size_t n) {
    size_t lo = x, end = x + n < r->pages ? x + n : r->pages;
    for (size_t p = x; p <= end; p++) {
        unsigned char idle = PG_IDLE;
        if (p < end && __atomic_compare_exchange_n(&r->state[p], &idle, PG_ARMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        if (p > lo && sys_mprotect((void *)(r->start + lo * (size_t)page_size), (p - lo) * (size_t)page_size, PROT_NONE))
            for (size_t q = lo; q < p; q++) __atomic_store_n(&r->state[q], PG_IDLE, __ATOMIC_RELEASE);
        lo = p + 1;
    }
}

/* Arms about arm_pages pages, in runs of arm_run_len drawn uniformly from the live regions:
 * one mprotect (and one TLB shootdown on every core of the process) per run, not per page. */
static void arm_round(void) {
    pthread_mutex_lock(&lock);
    size_t total = 0;
    for (int i = 0; i < nregions; i++) if (regions[i].live) total += regions[i].pages;
    long runs = (arm_pages + arm_run_len - 1) / arm_run_len;
    for (long k = 0; k < runs && total; k++) {
        size_t x = (size_t)(rng() % total);
        region *r = regions;
        for (int i = 0; i < nregions; i++) {
            r = &regions[i];
            if (!r->live) continue;
            if (x < r->pages) break;
            x -= r->pages;
        }
        arm_run(r, x, (size_t)arm_run_len);
    }
    pthread_mutex_unlock(&lock);
}

/* Moves the helper to another CPU of its mask, drawn at random, for its next wake-up.
 * Why: when the program's threads fill the CPUs, the helper's wake-up preempts the
 * thread on its CPU, and a thread on another CPU touches the armed pages first. The
 * scheduler wakes the helper where it slept, so without the move the same thread
 * would lose every draw (one thread of four had 1 % of a shared page's samples). */
static void move_helper(const int *cpus, int ncpus) {
    if (ncpus < 2) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[rng() % (uint64_t)ncpus], &one);
    sched_setaffinity(0, sizeof one, &one);
}

/* The CPUs of the helper's mask (inherited from the thread that started it), listed once. */
static int mask_cpus(int *cpus) {
    cpu_set_t mask;
    int n = 0;
    if (sched_getaffinity(0, sizeof mask, &mask) != 0) return 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mask)) cpus[n++] = c;
    return n;
}

static void *sampler_main(void *arg) {
    (void)arg;
    struct timespec ts = {period_us / 1000000, (period_us % 1000000) * 1000};
    static int cpus[CPU_SETSIZE];
    int ncpus = mask_cpus(cpus);
    while (__atomic_load_n(&running, __ATOMIC_ACQUIRE)) {
        move_helper(cpus, ncpus);
        nanosleep(&ts, NULL);
        arm_round();
    }
    return NULL;
}

/* ---- the CSV, at exit ---- */

static void write_csv(void) {
    int threads = threads_seen < max_threads ? threads_seen : (int)max_threads;
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", output, (int)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) { fprintf(stderr, "pagesample: cannot write %s: %s\n", tmp, strerror(errno)); return; }
    fputs("page.address,alloc.thread,alloc.location,firsttouch.thread,firsttouch.location,structure.name", f);
    for (int t = 0; t < threads; t++) fprintf(f, ",T%d", t);
    fputc('\n', f);
    unsigned long pages = 0, samples = 0;
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        for (size_t p = 0; p < r->pages; p++) {
            uint32_t *c = &r->counts[p * (size_t)max_threads];
            unsigned long sum = 0;
            for (int t = 0; t < threads; t++) sum += c[t];
            if (!sum) continue;
            pages++;
            samples += sum;
            fprintf(f, "0x%lx,%d,?,%d,?,%s%d", (unsigned long)(r->start + p * (size_t)page_size), r->alloc_thread,
                    (int)r->first[p], r->from_malloc ? "malloc" : "mmap", i);
            for (int t = 0; t < threads; t++) fprintf(f, ",%u", c[t]);
            fputc('\n', f);
        }
    }
    if (fclose(f) != 0 || rename(tmp, output) != 0) {
        fprintf(stderr, "pagesample: cannot write %s: %s\n", output, strerror(errno));
        unlink(tmp);
        return;
    }
    fprintf(stderr, "pagesample: %s pages=%lu samples=%lu threads=%d regions=%d untracked=%lu dropped=%lu "
            "period_us=%ld pages_per_round=%ld run=%ld\n", output, pages, samples, threads, nregions, untracked,
            dropped, period_us, arm_pages, arm_run_len);
}

/* ---- start and end ---- */

/* A forked child has no sampler thread, and the lock may have been held by it. */
static void in_child(void) {
    pthread_mutex_init(&lock, NULL);
    running = 0;
}

__attribute__((constructor)) static void ps_start(void) {
    page_size = sysconf(_SC_PAGESIZE);
    period_us = env_long("PAGESAMPLE_PERIOD_US", period_us, 100, 10000000);
    arm_pages = env_long("PAGESAMPLE_PAGES", arm_pages, 1, 1 << 20);
    arm_run_len = env_long("PAGESAMPLE_RUN", arm_run_len, 1, 4096);
    min_bytes = env_long("PAGESAMPLE_MIN_BYTES", min_bytes, page_size, LONG_MAX / 2);
    max_threads = env_long("PAGESAMPLE_MAX_THREADS", max_threads, 1, 4096);
    set_output();
    my_thread = 0;
    struct sigaction sa = {.sa_sigaction = on_fault, .sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER};
    sigemptyset(&sa.sa_mask);
    sys_sigaction(SIGSEGV, &sa, &program_segv);
    rng_state ^= (uint64_t)getpid() * 0x2545f4914f6cdd1dull;
    running = 1;
    ready = 1;
    static int (*real_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    real_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    if (real_create(&sampler, NULL, sampler_main, NULL) != 0) running = 0;
    pthread_atfork(NULL, NULL, in_child);
}

__attribute__((destructor)) static void ps_end(void) {
    if (!ready) return;
    if (__atomic_exchange_n(&running, 0, __ATOMIC_ACQ_REL)) pthread_join(sampler, NULL);
    if (nregions) write_csv();
}

/* ---- interposed calls ---- */

typedef struct { void *(*fn)(void *); void *arg; int index; } start_args;

static void *thread_start(void *p) {
    start_args a = *(start_args *)p;
    free(p);
    my_thread = a.index;
    return a.fn(a.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real) real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))dlsym(RTLD_NEXT, "pthread_create");
    start_args *a = malloc(sizeof *a);
    if (!a) return EAGAIN;
    a->fn = fn;
    a->arg = arg;
    a->index = __atomic_fetch_add(&next_thread, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&threads_seen, 1, __ATOMIC_RELAXED);
    int rc = real(th, attr, thread_start, a);
    if (rc) { free(a); __atomic_fetch_sub(&threads_seen, 1, __ATOMIC_RELAXED); }
    return rc;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    void *p = sys_mmap(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) && (flags & MAP_PRIVATE) && prot == (PROT_READ | PROT_WRITE)) {
        if (flags & MAP_FIXED) untrack_range((uintptr_t)p, len);
        track(p, len, 0);
    }
    return p;
}

int munmap(void *addr, size_t len) {
    untrack_range((uintptr_t)addr, len);
    return sys_munmap(addr, len);
}

/* The program's own protection wins: its pages are no longer sampled. */
int mprotect(void *addr, size_t len, int prot) {
    pthread_mutex_lock(&lock);
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        if (!r->live || a + len <= r->start || a >= r->start + r->pages * (size_t)page_size) continue;
        size_t lo = a > r->start ? (a - r->start) / (size_t)page_size : 0;
        size_t hi = (a + len - r->start + (size_t)page_size - 1) / (size_t)page_size;
        if (hi > r->pages) hi = r->pages;
        for (size_t p = lo; p < hi; p++)
            __atomic_store_n(&r->state[p], prot == (PROT_READ | PROT_WRITE) ? PG_IDLE : PG_OFF, __ATOMIC_RELEASE);
    }
    int rc = sys_mprotect(addr, len, prot);
    pthread_mutex_unlock(&lock);
    return rc;
}

void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...) {
    static void *(*real)(void *, size_t, size_t, int, ...);
    if (!real) real = (void *(*)(void *, size_t, size_t, int, ...))dlsym(RTLD_NEXT, "mremap");
    untrack_range((uintptr_t)old, old_len);
    va_list ap;
    va_start(ap, flags);
    void *target = (flags & MREMAP_FIXED) ? va_arg(ap, void *) : NULL;
    va_end(ap);
    return real(old, old_len, new_len, flags, target);
}

/* The program keeps its SIGSEGV handler: it is called for the faults that are not the sampler's. */
int sigaction(int sig, const struct sigaction *sa, struct sigaction *old) {
    if (sig != SIGSEGV || !ready) return sys_sigaction(sig, sa, old);
    if (old) *old = program_segv;
    if (sa) program_segv = *sa;
    return 0;
}

sighandler_t signal(int sig, sighandler_t h) {
    static sighandler_t (*real)(int, sighandler_t);
    if (!real) real = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
    if (sig != SIGSEGV || !ready) return real(sig, h);
    sighandler_t prev = (program_segv.sa_flags & SA_SIGINFO) ? SIG_DFL : program_segv.sa_handler;
    memset(&program_segv, 0, sizeof program_segv);
    program_segv.sa_handler = h;
    return prev;
}

/* ---- large allocations: each its own tracked mapping ---- */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static void *big_alloc(size_t n) {
    void *p = sys_mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { errno = ENOMEM; return NULL; }
    track(p, n, 1);
    return p;
}

/* The tracked allocation starting at p, or NULL; only page-aligned pointers can be one. */
static region *big_of(const void *p) {
    if (!p || ((uintptr_t)p & (uintptr_t)(page_size - 1))) return NULL;
    int n = nregions;
    for (int i = 0; i < n; i++)
        if (regions[i].live && regions[i].from_malloc && regions[i].start == (uintptr_t)p) return &regions[i];
    return NULL;
}

void *malloc(size_t n) {
    return ready && n >= (size_t)min_bytes ? big_alloc(n) : __libc_malloc(n);
}

void *calloc(size_t k, size_t n) {
    size_t b;
    if (__builtin_mul_overflow(k, n, &b)) { errno = ENOMEM; return NULL; }
    return ready && b >= (size_t)min_bytes ? big_alloc(b) : __libc_calloc(k, n);
}

void free(void *p) {
    region *r = big_of(p);
    if (!r) { __libc_free(p); return; }
    size_t len = r->pages * (size_t)page_size;
    untrack_range((uintptr_t)p, len);
    sys_munmap(p, len);
}

size_t malloc_usable_size(void *p) {
    static size_t (*real)(void *);
    region *r = big_of(p);
    if (r) return r->pages * (size_t)page_size;
    if (!real) real = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return real(p);
}

void *realloc(void *p, size_t n) {
    region *r = big_of(p);
    if (!r && (!ready || n < (size_t)min_bytes)) return __libc_realloc(p, n);
    void *q = malloc(n);
    if (!q || !p) return q;
    size_t old = r ? r->pages * (size_t)page_size : malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

void *aligned_alloc(size_t align, size_t n) {
    return ready && n >= (size_t)min_bytes && align <= (size_t)page_size ? big_alloc(n) : __libc_memalign(align, n);
}

void *memalign(size_t align, size_t n) { return aligned_alloc(align, n); }

int posix_memalign(void **out, size_t align, size_t n) {
    void *p = aligned_alloc(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
