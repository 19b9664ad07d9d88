/*
 * bindprobe: report, per OpenMP thread, the CPU it runs on and the CPUs it is
 * allowed on, plus the process's memory policy, in a machine-readable form.
 *
 * It is run in the same job and environment as a benchmark so the sanity
 * check can verify that the requested binding and memory policy really
 * happened, instead of trusting that the environment variables were honoured.
 *
 * Output (one line each):
 *   bindprobe threads=N
 *   bindprobe thread=I cpu=C allowed=LIST
 *   bindprobe mempolicy=MODE nodes=LIST
 */
#define _GNU_SOURCE
#include <errno.h>
#include <numaif.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CPUS 8192
#define MAX_NODES 1024

/* Format a set as a compact range list ("0-3,8"). */
static void format_set(const unsigned char *has, int n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!has[i])
            continue;
        int j = i;
        while (j + 1 < n && has[j + 1])
            j++;
        int w = (i == j) ? snprintf(out + len, cap - len, "%s%d", len ? "," : "", i)
                         : snprintf(out + len, cap - len, "%s%d-%d", len ? "," : "", i, j);
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
        i = j;
    }
}

static const char *mode_name(int mode)
{
    switch (mode) {
    case MPOL_DEFAULT: return "default";
    case MPOL_PREFERRED: return "preferred";
    case MPOL_BIND: return "bind";
    case MPOL_INTERLEAVE: return "interleave";
#ifdef MPOL_LOCAL
    case MPOL_LOCAL: return "local";
#endif
    default: return "other";
    }
}

int main(int argc, char **argv)
{
    int spin_ms = 50;
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (*end || v < 0 || v > 60000) {
            fprintf(stderr, "usage: %s [SPIN_MS]  (0..60000, default 50): time each thread "
                            "stays busy before reporting\n", argv[0]);
            return 2;
        }
        spin_ms = (int)v;
    }
    int nthreads = omp_get_max_threads();
    int *cpu = calloc((size_t)nthreads, sizeof *cpu);
    char (*allowed)[4096] = calloc((size_t)nthreads, sizeof *allowed);
    if (!cpu || !allowed) {
        fprintf(stderr, "bindprobe: out of memory\n");
        return 1;
    }

#pragma omp parallel
    {
        int me = omp_get_thread_num();
        /* Stay busy a moment so every thread exists at once and the OS has placed it. */
        double t0 = omp_get_wtime();
        volatile double x = 0;
        while ((omp_get_wtime() - t0) * 1000.0 < spin_ms)
            x += 1.0;
#pragma omp barrier
        cpu_set_t set;
        CPU_ZERO(&set);
        unsigned char has[MAX_CPUS] = {0};
        if (sched_getaffinity(0, sizeof set, &set) == 0)
            for (int c = 0; c < MAX_CPUS && c < CPU_SETSIZE; c++)
                has[c] = CPU_ISSET(c, &set) ? 1 : 0;
        cpu[me] = sched_getcpu();
        format_set(has, MAX_CPUS < CPU_SETSIZE ? MAX_CPUS : CPU_SETSIZE, allowed[me],
                   sizeof allowed[me]);
    }

    printf("bindprobe threads=%d\n", nthreads);
    for (int i = 0; i < nthreads; i++)
        printf("bindprobe thread=%d cpu=%d allowed=%s\n", i, cpu[i], allowed[i]);

    int mode = 0;
    unsigned long mask[MAX_NODES / (8 * sizeof(unsigned long))] = {0};
    if (get_mempolicy(&mode, mask, MAX_NODES, NULL, 0) == 0) {
        unsigned char nodes[MAX_NODES] = {0};
        for (int n = 0; n < MAX_NODES; n++)
            nodes[n] = (mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long)))) & 1UL;
        char list[4096];
        format_set(nodes, MAX_NODES, list, sizeof list);
        printf("bindprobe mempolicy=%s nodes=%s\n", mode_name(mode), list);
    } else {
        printf("bindprobe mempolicy=unknown nodes= error=%s\n", strerror(errno));
    }
    free(cpu);
    free(allowed);
    return 0;
}
