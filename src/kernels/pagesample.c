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
 * <program>.full.page.csv; %p is the pid) through a temporary file and a rename; a device,
 * FIFO, socket or folder at that name is left as it is and no table is written.
 *
 *   PAGESAMPLE_PERIOD_US  time between arming rounds (default 10000)
 *   PAGESAMPLE_PAGES      pages armed per round (default 64)
 *   PAGESAMPLE_RUN        pages armed together, side by side, one mprotect each (default 8)
 *   PAGESAMPLE_MIN_BYTES  smallest mapping or allocation tracked (default 65536)
 *   PAGESAMPLE_MAX_THREADS threads counted, T0..Tn-1 (default 64; later ones are dropped)
 *
 * The program is not changed by it. The kernel answers a system call on a PROT_NONE page
 * with EFAULT, not SIGSEGV, so libc's calls that hand the kernel a buffer (read/write and
 * their p-, v-, 64 and _chk forms, recv/send/-from/-to/-msg, getrandom, process_vm_*'s local
 * side, fread/fwrite/fputs/puts; the printf family is formatted in memory, then written) pin it
 * first (pagesample_io.c): its armed pages are counted as the caller's access and given back,
 * and none is armed until the call returns. Memory the
 * kernel fills on its own is never armed: sigaltstack stacks, pthread_attr_setstack stacks,
 * setvbuf/setbuf buffers; allocations libc makes itself are not tracked. The SIGSEGV handler
 * takes the alternate stack when the program's handler asks for it (SA_ONSTACK), and a fault
 * not the sampler's reaches the program's handler with its SA_SIGINFO, SA_RESETHAND and mask,
 * or the default action (a sent SIGSEGV is sent again). A forked child writes a table only
 * where the output names the pid (%p); every exec'd program that is preloaded writes its own.
 * Not covered: system calls made without these wrappers (syscall(2), inline system calls,
 * io_uring, AIO, ioctl, stat/poll arrays, futex words inside a tracked allocation in the
 * instant between a thread's access and its futex call), RDMA registration (ibv_reg_mr) and
 * another process reading tracked pages (CMA), user-level stacks from makecontext or a
 * coroutine library, and a SIGSEGV handler installed with the raw rt_sigaction call. For such
 * programs raise PAGESAMPLE_MIN_BYTES above the buffers concerned. A second fault inside the
 * program's own SIGSEGV handler reaches that handler again (SIGSEGV stays unblocked there, so
 * that sampled pages it touches can fault), where without the sampler it would kill.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pagesample.h"

#define MAX_REGIONS 4096
#define LOOP_LIMIT 100000 /* faults in a row on one page that is not armed: not ours */

/* PG_OFF: the program's own protection; PG_KEPT: memory the kernel fills itself, never armed */
enum { PG_IDLE, PG_ARMED, PG_BUSY, PG_OFF, PG_KEPT };

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
static int output_has_pid, writes_csv = 1;
static volatile int running, ready;
static uintptr_t lo_bound = UINTPTR_MAX, hi_bound; /* all regions lie within */
static uintptr_t libc_lo, libc_hi;                 /* libc's code: its allocations are not tracked */
static int next_thread = 1, threads_seen = 1;
static unsigned long dropped, untracked;
static pthread_t sampler;
static struct sigaction program_segv; /* the program's own SIGSEGV handler, called for faults not ours */
static __thread int my_thread __attribute__((tls_model("initial-exec"))) = -1;
static __thread uintptr_t loop_page __attribute__((tls_model("initial-exec")));
static __thread long loop_count __attribute__((tls_model("initial-exec")));
static __thread int holds_lock __attribute__((tls_model("initial-exec")));

/* The lock over the regions table and the arming, with who holds it: a signal handler that
 * calls write() while its thread holds the lock must not wait for itself. */
static void take(void) { pthread_mutex_lock(&lock); holds_lock = 1; }
static void drop(void) { holds_lock = 0; pthread_mutex_unlock(&lock); }

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
        fprintf(stderr, "pagesample: %s='%.64s' is not accepted: a whole number from %ld to %ld\n", name, v, lo, hi);
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
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)sprintf(output + o, "%d", (int)getpid());
            output_has_pid = 1;
            p++;
        }
        else output[o++] = *p;
    }
    output[o] = '\0';
}

/* ---- regions ---- */

static region *find(uintptr_t a) {
    int n = __atomic_load_n(&nregions, __ATOMIC_ACQUIRE);
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
    take();
    if (nregions == MAX_REGIONS) {
        drop();
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
    if (r->start < lo_bound) lo_bound = r->start;
    if (r->start + pages * (size_t)page_size > hi_bound) hi_bound = r->start + pages * (size_t)page_size;
    __atomic_store_n(&nregions, nregions + 1, __ATOMIC_RELEASE);
    drop();
}

/* Gives every armed page of r its access back (the region goes, moves or is re-protected). */
static void disarm(region *r) {
    for (size_t i = 0; i < r->pages; i++)
        if (__atomic_exchange_n(&r->state[i], PG_OFF, __ATOMIC_ACQ_REL) == PG_ARMED)
            sys_mprotect((void *)(r->start + i * (size_t)page_size), (size_t)page_size, PROT_READ | PROT_WRITE);
}

static void untrack_range(uintptr_t a, size_t len) {
    take();
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        if (r->live && a < r->start + r->pages * (size_t)page_size && r->start < a + len) {
            r->live = 0;
            disarm(r);
        }
    }
    drop();
}

/* ---- an access counted, a page given back ---- */

/* Counts an access of the calling thread to page pg of r, the first one as its first touch. */
static void credit(region *r, size_t pg) {
    int t = my_thread < 0 ? 0 : my_thread;
    if (t >= max_threads) { __atomic_fetch_add(&dropped, 1, __ATOMIC_RELAXED); return; }
    __atomic_fetch_add(&r->counts[pg * (size_t)max_threads + (size_t)t], 1, __ATOMIC_RELAXED);
    int32_t none = -1;
    __atomic_compare_exchange_n(&r->first[pg], &none, t, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* Page pg of r, armed and claimed (PG_BUSY): counted, its access given back, left in state `to`. */
static void give_back(region *r, size_t pg, unsigned char to) {
    credit(r, pg);
    uintptr_t base = r->start + pg * (size_t)page_size;
    if (sys_mprotect((void *)base, (size_t)page_size, PROT_READ | PROT_WRITE) != 0) {
        /* no room for one more mapping (vm.max_map_count): the region goes untracked, whole,
         * in one call that merges its mappings instead of splitting one more */
        r->live = 0;
        disarm(r);
        sys_mprotect((void *)r->start, r->pages * (size_t)page_size, PROT_READ | PROT_WRITE);
    }
    __atomic_store_n(&r->state[pg], to, __ATOMIC_RELEASE);
}

/* ---- system calls: their buffers are never armed ---- */

#define PIN_SLOTS 256
static uintptr_t pin_lo[PIN_SLOTS], pin_hi[PIN_SLOTS]; /* hi 0: free; claimed under the lock */
static int pins_active, pins_paused;

/* Whether [a, a+n) meets a live region; no lock: the table only grows. */
static int overlaps(uintptr_t a, size_t n) {
    int k = __atomic_load_n(&nregions, __ATOMIC_ACQUIRE);
    if (!k || a >= hi_bound || a + n <= lo_bound) return 0;
    for (int i = 0; i < k; i++) {
        region *r = &regions[i];
        if (r->live && a < r->start + r->pages * (size_t)page_size && r->start < a + n) return 1;
    }
    return 0;
}

/* Every armed page of [a, a+n) is counted and given back, every idle one set to `to`
 * (PG_IDLE or PG_KEPT). A page another thread's fault holds is waited for. Under the lock. */
static void release_range(uintptr_t a, size_t n, unsigned char to) {
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        uintptr_t end = r->start + r->pages * (size_t)page_size;
        if (!r->live || a >= end || a + n <= r->start) continue;
        size_t lo = a > r->start ? (a - r->start) / (size_t)page_size : 0;
        size_t hi = a + n >= end ? r->pages : (a + n - r->start + (size_t)page_size - 1) / (size_t)page_size;
        for (size_t p = lo; p < hi && r->live; p++) {
            unsigned char st = __atomic_load_n(&r->state[p], __ATOMIC_ACQUIRE);
            while (st == PG_BUSY) { sched_yield(); st = __atomic_load_n(&r->state[p], __ATOMIC_ACQUIRE); }
            if (st == PG_ARMED && __atomic_compare_exchange_n(&r->state[p], &st, PG_BUSY, 0, __ATOMIC_ACQ_REL,
                                                              __ATOMIC_ACQUIRE))
                give_back(r, p, to);
            else if (st == PG_IDLE)
                __atomic_store_n(&r->state[p], to, __ATOMIC_RELEASE);
        }
    }
}

void ps_pin(ps_pins *p, const void *buf, size_t len) {
    uintptr_t a = (uintptr_t)buf;
    if (!len || !overlaps(a, len) || holds_lock) return;
    take();
    int s = -1;
    if (p->n < PS_PIN_MAX)
        for (int i = 0; i < PIN_SLOTS && s < 0; i++) if (!pin_hi[i]) s = i;
    if (s >= 0) {
        pin_lo[s] = a;
        __atomic_store_n(&pin_hi[s], a + len, __ATOMIC_RELEASE);
        p->slot[p->n++] = s;
        __atomic_fetch_add(&pins_active, 1, __ATOMIC_RELAXED);
    } else if (!p->paused) {
        p->paused = 1;
        __atomic_fetch_add(&pins_paused, 1, __ATOMIC_RELAXED);
    }
    release_range(a, len, PG_IDLE);
    drop();
}

void ps_unpin(ps_pins *p) {
    for (int i = 0; i < p->n; i++) {
        __atomic_store_n(&pin_hi[p->slot[i]], 0, __ATOMIC_RELEASE);
        __atomic_fetch_sub(&pins_active, 1, __ATOMIC_RELAXED);
    }
    if (p->paused) __atomic_fetch_sub(&pins_paused, 1, __ATOMIC_RELAXED);
}

void ps_keep(const void *buf, size_t len) {
    if (!len || !overlaps((uintptr_t)buf, len) || holds_lock) return;
    take();
    release_range((uintptr_t)buf, len, PG_KEPT);
    drop();
}

/* Whether a system call in flight touches the page at a: the sampler leaves it alone. */
static int pinned(uintptr_t a) {
    if (__atomic_load_n(&pins_paused, __ATOMIC_ACQUIRE)) return 1;
    if (!__atomic_load_n(&pins_active, __ATOMIC_ACQUIRE)) return 0;
    for (int i = 0; i < PIN_SLOTS; i++) {
        uintptr_t hi = __atomic_load_n(&pin_hi[i], __ATOMIC_ACQUIRE);
        if (hi && a < hi && a + (size_t)page_size > pin_lo[i]) return 1;
    }
    return 0;
}

/* ---- the fault handler ---- */

/* Our handler takes the alternate stack when the program's does: its stack-overflow handler
 * (Rust, Go, the JVM) can only run there. */
static void install_handler(void);

static int is_handler(const struct sigaction *h) { return h->sa_handler != SIG_DFL && h->sa_handler != SIG_IGN; }

/* A fault that is not the sampler's, given to the program as the kernel would have: its
 * handler with its flags and mask, or the default action. */
static void not_ours(int sig, siginfo_t *si, void *uc) {
    struct sigaction h = program_segv;
    if (!is_handler(&h)) {
        struct sigaction dfl = {.sa_handler = SIG_DFL};
        sys_sigaction(SIGSEGV, &dfl, NULL);
        /* a fault runs again and kills the process; a sent signal (kill, raise) is sent again */
        if (si->si_code <= 0) raise(sig);
        return;
    }
    if (h.sa_flags & SA_RESETHAND) {
        memset(&program_segv, 0, sizeof program_segv);
        program_segv.sa_handler = SIG_DFL;
        install_handler();
    }
    /* its mask, but SIGSEGV stays open: a sampled page touched inside the handler must fault */
    sigset_t mask = h.sa_mask;
    sigdelset(&mask, SIGSEGV);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    if (h.sa_flags & SA_SIGINFO) h.sa_sigaction(sig, si, uc);
    else h.sa_handler(sig);
}

static void on_fault(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    uintptr_t a = (uintptr_t)si->si_addr;
    region *r = si->si_code > 0 ? find(a) : NULL;
    if (!r) { not_ours(sig, si, uc); errno = saved; return; }
    size_t pg = (a - r->start) / (size_t)page_size;
    unsigned char st = __atomic_load_n(&r->state[pg], __ATOMIC_ACQUIRE);
    if (st == PG_ARMED && __atomic_compare_exchange_n(&r->state[pg], &st, PG_BUSY, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        give_back(r, pg, PG_IDLE);
        loop_count = 0;
    } else if (st == PG_OFF || st == PG_KEPT) {
        not_ours(sig, si, uc);
    } else if (a / (size_t)page_size == loop_page && ++loop_count > LOOP_LIMIT) {
        not_ours(sig, si, uc); /* another thread gives the page back: retry, unless it never does */
    } else if (a / (size_t)page_size != loop_page) {
        loop_page = a / (size_t)page_size;
        loop_count = 0;
    }
    errno = saved;
}

static void install_handler(void) {
    struct sigaction sa = {.sa_sigaction = on_fault,
                           .sa_flags = SA_SIGINFO | SA_RESTART | SA_NODEFER | (program_segv.sa_flags & SA_ONSTACK)};
    sigemptyset(&sa.sa_mask);
    sys_sigaction(SIGSEGV, &sa, NULL);
}

/* ---- the sampler thread ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13; rng_state ^= rng_state >> 7; rng_state ^= rng_state << 17;
    return rng_state;
}

/* Arms pages [x, x+n) of r that are idle and no system call touches, one mprotect per
 * stretch of them. Under the lock, so that no call pins a page between the check and the arming. */
static void arm_run(region *r, size_t x, size_t n) {
    size_t lo = x, end = x + n < r->pages ? x + n : r->pages;
    for (size_t p = x; p <= end; p++) {
        unsigned char idle = PG_IDLE;
        if (p < end && !pinned(r->start + p * (size_t)page_size) && __atomic_compare_exchange_n(&r->state[p], &idle, PG_ARMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            continue;
        if (p > lo && sys_mprotect((void *)(r->start + lo * (size_t)page_size), (p - lo) * (size_t)page_size, PROT_NONE))
            for (size_t q = lo; q < p; q++) __atomic_store_n(&r->state[q], PG_IDLE, __ATOMIC_RELEASE);
        lo = p + 1;
    }
}

/* Arms about arm_pages pages, in runs of arm_run_len drawn uniformly from the live regions:
 * one mprotect (and one TLB shootdown on every core of the process) per run, not per page. */
static void arm_round(void) {
    take();
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
    drop();
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

/* A new temporary file beside the output, never one that is there (a link planted at its
 * name is not followed): O_EXCL, O_NOFOLLOW, the mode fopen would give (0666 less the umask). */
static FILE *open_tmp(char *tmp, size_t size) {
    for (int k = 0; k < 100; k++) {
        if (k) snprintf(tmp, size, "%s.tmp.%d.%lu", output, (int)getpid(), (unsigned long)(rng() % 1000000));
        else snprintf(tmp, size, "%s.tmp.%d", output, (int)getpid());
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "w");
            if (!f) { close(fd); unlink(tmp); }
            return f;
        }
        if (errno != EEXIST) break;
    }
    fprintf(stderr, "pagesample: cannot write %s: %s\n", tmp, strerror(errno));
    return NULL;
}

/* The kind of what stands at the output when it is neither absent, a regular file nor a link
 * (a link is replaced by the rename, never followed); NULL when the table may go there. The
 * rename would put the table in place of a device node (PAGESAMPLE_OUTPUT=/dev/null, as root,
 * replaced /dev/null itself), a FIFO or a socket. */
static const char *not_a_file(void) {
    struct stat st;
    if (lstat(output, &st) != 0 || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) return NULL;
    if (S_ISDIR(st.st_mode)) return "a directory";
    if (S_ISCHR(st.st_mode)) return "a character device";
    if (S_ISBLK(st.st_mode)) return "a block device";
    if (S_ISFIFO(st.st_mode)) return "a FIFO (named pipe)";
    return "a socket or other special file";
}

static void write_csv(void) {
    int threads = threads_seen < max_threads ? threads_seen : (int)max_threads;
    const char *kind = not_a_file();
    if (kind) {
        fprintf(stderr, "pagesample: %s is %s, not a regular file: no table written (name a file in "
                "PAGESAMPLE_OUTPUT)\n", output, kind);
        return;
    }
    char tmp[PATH_MAX + 48];
    FILE *f = open_tmp(tmp, sizeof tmp);
    if (!f) return;
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

/* A forked child has no sampler thread, the lock may have been held by it, and the calls
 * that pinned ranges are the parent's. A page another thread was giving back at the fork is
 * armed again: the child's next access to it counts it. The child writes its own table only
 * where the output names the pid (%p); otherwise the parent's file and stderr are the parent's. */
static void in_child(void) {
    pthread_mutex_init(&lock, NULL);
    holds_lock = 0;
    running = 0;
    memset(pin_hi, 0, sizeof pin_hi);
    pins_active = pins_paused = 0;
    for (int i = 0; i < nregions; i++)
        for (size_t p = 0; p < regions[i].pages; p++)
            if (regions[i].state[p] == PG_BUSY) regions[i].state[p] = PG_ARMED;
    writes_csv = output_has_pid;
    if (output_has_pid) set_output();
}

/* libc's code, where its own allocations come from (stdio buffers, getline's lines): the
 * kernel fills them inside libc's own read(), which no wrapper sees, so they are not tracked. */
static int find_libc(struct dl_phdr_info *info, size_t size, void *arg) {
    (void)size; (void)arg;
    if (!info->dlpi_name || !strstr(info->dlpi_name, "/libc.so")) return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X)) continue;
        libc_lo = info->dlpi_addr + ph->p_vaddr;
        libc_hi = libc_lo + ph->p_memsz;
    }
    return 1;
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
    dl_iterate_phdr(find_libc, NULL);
    sys_sigaction(SIGSEGV, NULL, &program_segv);
    install_handler();
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
    if (nregions && writes_csv) write_csv();
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
    take();
    uintptr_t a = (uintptr_t)addr;
    for (int i = 0; i < nregions; i++) {
        region *r = &regions[i];
        if (!r->live || a + len <= r->start || a >= r->start + r->pages * (size_t)page_size) continue;
        size_t lo = a > r->start ? (a - r->start) / (size_t)page_size : 0;
        size_t hi = (a + len - r->start + (size_t)page_size - 1) / (size_t)page_size;
        if (hi > r->pages) hi = r->pages;
        for (size_t p = lo; p < hi; p++)
            if (prot != (PROT_READ | PROT_WRITE) || r->state[p] != PG_KEPT)
                __atomic_store_n(&r->state[p], prot == (PROT_READ | PROT_WRITE) ? PG_IDLE : PG_OFF, __ATOMIC_RELEASE);
    }
    int rc = sys_mprotect(addr, len, prot);
    drop();
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
    if (sa) { program_segv = *sa; install_handler(); }
    return 0;
}

sighandler_t signal(int sig, sighandler_t h) {
    static sighandler_t (*real)(int, sighandler_t);
    if (!real) real = (sighandler_t (*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
    if (sig != SIGSEGV || !ready) return real(sig, h);
    if (h == SIG_ERR) { errno = EINVAL; return SIG_ERR; }
    sighandler_t prev = program_segv.sa_handler; /* the handler's union, as libc returns it */
    memset(&program_segv, 0, sizeof program_segv);
    program_segv.sa_handler = h;
    program_segv.sa_flags = SA_RESTART; /* libc's signal(): BSD semantics */
    install_handler();
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

/* Whether an allocation of n bytes asked for at `caller` is tracked: not libc's own. */
static int tracks(size_t n, const void *caller) {
    return ready && n >= (size_t)min_bytes && !((uintptr_t)caller >= libc_lo && (uintptr_t)caller < libc_hi);
}

#define CALLER __builtin_return_address(0)

void *malloc(size_t n) { return tracks(n, CALLER) ? big_alloc(n) : __libc_malloc(n); }

void *calloc(size_t k, size_t n) {
    size_t b;
    if (__builtin_mul_overflow(k, n, &b)) { errno = ENOMEM; return NULL; }
    return tracks(b, CALLER) ? big_alloc(b) : __libc_calloc(k, n);
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
    int tracked = tracks(n, CALLER);
    if (!r && !tracked) return __libc_realloc(p, n);
    void *q = tracked ? big_alloc(n) : __libc_malloc(n);
    if (!q || !p) return q;
    size_t old = r ? r->pages * (size_t)page_size : malloc_usable_size(p);
    memcpy(q, p, old < n ? old : n);
    free(p);
    return q;
}

static void *aligned_from(size_t align, size_t n, const void *caller) {
    return tracks(n, caller) && align <= (size_t)page_size ? big_alloc(n) : __libc_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n) { return aligned_from(align, n, CALLER); }

void *memalign(size_t align, size_t n) { return aligned_from(align, n, CALLER); }

int posix_memalign(void **out, size_t align, size_t n) {
    void *p = aligned_from(align, n, CALLER);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
