/* LD_PRELOAD shim: a process sees the node an hwloc XML describes, not this host.
 *
 * FAKE_NODE_ROOT  a folder holding proc/cpuinfo and sys/devices/system/cpu/... of the node:
 *                 fopen() of /proc/cpuinfo and /sys/devices/system/cpu/... reads it instead.
 * FAKE_NODE_CPUS  the node's PUs, "0-15": what sched_getaffinity() returns at first.
 * FAKE_NODE_DIR   where a process's mask is left across exec (mask.<pid>), for taskset,
 *                 numactl, hwloc-bind and mpirun, which bind and then exec the program.
 *
 * sched_setaffinity and pthread_(attr_)setaffinity_np (and the raw syscall libomp uses)
 * succeed and record the mask per thread instead of binding: CPUs this host lacks could
 * not be bound, and the point is what the runtime asked for. A thread asking for its own
 * affinity gets the recorded mask. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAXCPU 4096
#define MASKBYTES (MAXCPU / 8)
#define MAXT 8192

static unsigned char node_mask[MASKBYTES];
static struct { pid_t tid; unsigned char m[MASKBYTES]; } table[MAXT];
static struct { const void *attr; unsigned char m[MASKBYTES]; } attrs[256];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ncpus = 0;

static long real_syscall6(long n, long a, long b, long c, long d, long e, long f);

static pid_t my_tid(void) { return (pid_t)real_syscall6(SYS_gettid, 0, 0, 0, 0, 0, 0); }

static void parse_list(const char *s, unsigned char *m) {
    memset(m, 0, MASKBYTES);
    while (s && *s) {
        char *end; long lo = strtol(s, &end, 10), hi = lo;
        if (end == s) break;
        if (*end == '-') { s = end + 1; hi = strtol(s, &end, 10); }
        for (long i = lo; i <= hi && i < MAXCPU; i++) m[i / 8] |= 1 << (i % 8);
        s = *end ? end + 1 : end;
    }
}

static void write_list(FILE *f, const unsigned char *m) {
    int first = 1;
    for (int i = 0; i < MAXCPU; i++)
        if (m[i / 8] >> (i % 8) & 1) { fprintf(f, first ? "%d" : ",%d", i); first = 0; }
}

static unsigned char *slot(pid_t tid, int create) {
    for (int i = 0; i < MAXT; i++) {
        if (table[i].tid == tid) return table[i].m;
        if (!table[i].tid) {
            if (!create) return NULL;
            table[i].tid = tid;
            memcpy(table[i].m, node_mask, MASKBYTES);
            return table[i].m;
        }
    }
    return NULL;
}

static void init(void);

static unsigned char *mask_of(pid_t tid) {
    init();
    pthread_mutex_lock(&lock);
    unsigned char *m = slot(tid ? tid : my_tid(), 1);
    pthread_mutex_unlock(&lock);
    return m;
}

static void leave_for_exec(pid_t pid, const unsigned char *m) {
    const char *dir = getenv("FAKE_NODE_DIR");
    if (!dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/mask.%d", dir, (int)pid);
    FILE *(*real_fopen)(const char *, const char *) = dlsym(RTLD_NEXT, "fopen");
    FILE *f = real_fopen(path, "w");
    if (f) { write_list(f, m); fclose(f); }
}

static void set_mask(pid_t tid, const void *mask, size_t size) {
    pid_t t = tid ? tid : my_tid();
    unsigned char *m = mask_of(t);
    if (!m) return;
    memset(m, 0, MASKBYTES);
    memcpy(m, mask, size < MASKBYTES ? size : MASKBYTES);
    if (t == getpid()) leave_for_exec(t, m);
}

static int get_mask(pid_t tid, void *mask, size_t size) {
    unsigned char *m = mask_of(tid);
    memset(mask, 0, size);
    memcpy(mask, m, size < MASKBYTES ? size : MASKBYTES);
    return 0;
}

static int ready = 0;

/* a child forked while another thread held the lock (mpirun's event thread) must not wait
 * for ever on it */
static void reset_lock_in_child(void) { pthread_mutex_init(&lock, NULL); }

/* runs on first use: a runtime's own constructor may ask before this library's runs */
static void init(void) {
    if (ready) return;
    ready = 1;
    pthread_atfork(NULL, NULL, reset_lock_in_child);
    const char *cpus = getenv("FAKE_NODE_CPUS");
    parse_list(cpus ? cpus : "0", node_mask);
    for (int i = 0; i < MAXCPU; i++) ncpus += node_mask[i / 8] >> (i % 8) & 1;
    const char *dir = getenv("FAKE_NODE_DIR");
    if (dir) {           /* a mask left by the process that exec'd this one */
        char path[4096], buf[65536];
        snprintf(path, sizeof path, "%s/mask.%d", dir, (int)getpid());
        FILE *(*real_fopen)(const char *, const char *) = dlsym(RTLD_NEXT, "fopen");
        FILE *f = real_fopen(path, "r");
        if (f) {
            size_t n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = 0;
            fclose(f);
            parse_list(buf, slot(getpid(), 1));
        }
    }
}

__attribute__((constructor)) static void init_early(void) { init(); }

/* --- what the process sees of the node ------------------------------------------ */
static const char *redirect(const char *path, char *buf, size_t len) {
    const char *root = getenv("FAKE_NODE_ROOT");
    if (!root || !path) return path;
    if (!strncmp(path, "/sys/devices/system/cpu", 23) || !strcmp(path, "/proc/cpuinfo") ||
        !strncmp(path, "/sys/devices/system/node", 24) || !strcmp(path, "/proc/self/status")) {
        snprintf(buf, len, "%s%s", root, path);
        return buf;
    }
    return path;
}

FILE *fopen(const char *path, const char *mode) {
    static FILE *(*real)(const char *, const char *);
    char buf[4096];
    if (!real) real = dlsym(RTLD_NEXT, "fopen");
    return real(redirect(path, buf, sizeof buf), mode);
}

FILE *fopen64(const char *path, const char *mode) { return fopen(path, mode); }

#include <dirent.h>
DIR *opendir(const char *path) {
    static DIR *(*real)(const char *);
    char buf[4096];
    if (!real) real = dlsym(RTLD_NEXT, "opendir");
    return real(redirect(path, buf, sizeof buf));
}

long sysconf(int name) {
    static long (*real)(int);
    if (!real) real = dlsym(RTLD_NEXT, "sysconf");
    init();
    if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) return ncpus;
    return real(name);
}

int get_nprocs(void) { init(); return ncpus; }
int get_nprocs_conf(void) { init(); return ncpus; }

/* --- affinity, recorded ------------------------------------------------------------ */
int sched_setaffinity(pid_t pid, size_t size, const cpu_set_t *mask) {
    set_mask(pid, mask, size);
    return 0;
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask) { return get_mask(pid, mask, size); }

static pid_t tid_of(pthread_t th);

int pthread_setaffinity_np(pthread_t th, size_t size, const cpu_set_t *mask) {
    set_mask(tid_of(th), mask, size);
    return 0;
}

int pthread_getaffinity_np(pthread_t th, size_t size, cpu_set_t *mask) {
    return get_mask(tid_of(th), mask, size);
}

int pthread_attr_setaffinity_np(pthread_attr_t *attr, size_t size, const cpu_set_t *mask) {
    pthread_mutex_lock(&lock);
    int i;
    for (i = 0; i < 256 && attrs[i].attr && attrs[i].attr != attr; i++) ;
    if (i < 256) {
        attrs[i].attr = attr;
        memset(attrs[i].m, 0, MASKBYTES);
        memcpy(attrs[i].m, mask, size < MASKBYTES ? size : MASKBYTES);
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

/* thread ids: each thread started through pthread_create records its pthread_t -> tid */
static struct { pthread_t th; pid_t tid; } ids[MAXT];
static pid_t tid_of(pthread_t th) {
    if (pthread_equal(th, pthread_self())) return my_tid();
    for (int i = 0; i < MAXT; i++) {
        for (int spin = 0; spin < 100000 && ids[i].th == th && !ids[i].tid; spin++) sched_yield();
        if (ids[i].th == th) return ids[i].tid;
    }
    return my_tid();
}

struct start { void *(*fn)(void *); void *arg; unsigned char m[MASKBYTES]; int idx; };

static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    unsigned char *m = mask_of(0);
    memcpy(m, s.m, MASKBYTES);
    ids[s.idx].tid = my_tid();
    return s.fn(s.arg);
}

int pthread_create(pthread_t *th, const pthread_attr_t *attr, void *(*fn)(void *), void *arg) {
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    static int next = 0;
    if (!real) real = dlsym(RTLD_NEXT, "pthread_create");
    struct start *s = malloc(sizeof *s);
    s->fn = fn; s->arg = arg;
    memcpy(s->m, mask_of(0), MASKBYTES);        /* a new thread inherits its creator's mask */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < 256 && attrs[i].attr; i++)
        if (attrs[i].attr == attr) memcpy(s->m, attrs[i].m, MASKBYTES);
    s->idx = next++ % MAXT;
    ids[s->idx].tid = 0;
    pthread_mutex_unlock(&lock);
    int rc = real(th, attr, trampoline, s);
    if (rc == 0) ids[s->idx].th = *th;
    return rc;
}

/* libomp and libnuma call the raw system calls through syscall(3) */
static long real_syscall6(long n, long a, long b, long c, long d, long e, long f) {
    static long (*real)(long, ...);
    if (!real) real = dlsym(RTLD_NEXT, "syscall");
    return real(n, a, b, c, d, e, f);
}

long syscall(long n, ...) {
    va_list ap;
    va_start(ap, n);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    if (n == SYS_sched_setaffinity) { set_mask((pid_t)a, (void *)c, (size_t)b); return 0; }
    if (n == SYS_sched_getaffinity) {
        get_mask((pid_t)a, (void *)c, (size_t)b);
        return (long)(b < MASKBYTES ? b : MASKBYTES);
    }
    return real_syscall6(n, a, b, c, d, e, f);
}
