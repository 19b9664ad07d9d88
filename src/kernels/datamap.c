/* Data mapping kernel of the NUMA study (Trindade et al.): an LBM-style stencil.
 *
 *   datamap [--nx 512] [--ny 512] [--init serial|parallel]
 *
 * A D2Q5 lattice: five populations per site, BGK-like relaxation towards the
 * site's mean, then streaming to the neighbours (periodic). The compute loop
 * is `omp parallel for schedule(static)` over rows; the arrays are first
 * written either by one thread (`serial`: under first-touch every page lands
 * on that thread's node) or with the compute loop's schedule (`parallel`:
 * each page lands where it is used). A sample is one time step.
 * At the end the kernel prints the /proc/self/numa_maps line of each array
 * (`numa_maps` lines), each thread's node and rows (`thread` lines), from
 * which placement.numa_pages computes the locality share, and a `check`
 * line: the total mass is conserved (KERNEL_CORRUPT=1 adds mass).
 * Right after initialisation it prints the same lines as `numa_maps_init`
 * (where first touch put the pages, before the kernel's automatic NUMA
 * balancing can move them during the run) and a `sysctl` line with
 * kernel.numa_balancing (-1 where the kernel has none).
 */
#define _GNU_SOURCE
#include "kargs.h"
#include "statloop.h"

#include <getopt.h>
#include <math.h>
#include <numa.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define Q 5
static const int CX[Q] = {0, 1, -1, 0, 0}, CY[Q] = {0, 0, 0, 1, -1};

typedef struct { double *f, *g; int nx, ny; double omega; } lattice;

static size_t idx(const lattice *l, int q, int y, int x) {
    return ((size_t)q * l->ny + (size_t)y) * l->nx + (size_t)x;
}

static double step(void *p) {
    lattice *l = p;
    double t0 = sl_now();
#pragma omp parallel for schedule(static)
    for (int y = 0; y < l->ny; y++) {
        for (int x = 0; x < l->nx; x++) {
            double rho = 0.0;
            for (int q = 0; q < Q; q++) rho += l->f[idx(l, q, y, x)];
            for (int q = 0; q < Q; q++) {
                double fq = l->f[idx(l, q, y, x)];
                int yy = (y + CY[q] + l->ny) % l->ny, xx = (x + CX[q] + l->nx) % l->nx;
                l->g[idx(l, q, yy, xx)] = fq + l->omega * (0.2 * rho - fq);
            }
        }
    }
    double dt = sl_now() - t0;
    double *t = l->f; l->f = l->g; l->g = t;
    return dt;
}

/* Its own mapping, between PROT_NONE guard pages so that the kernel keeps
 * it a VMA of its own (one numa_maps line per array, never merged with a
 * neighbouring anonymous mapping). */
static double *map_array(size_t bytes) {
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    char *p = mmap(NULL, len + 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) ka_die("cannot map %zu bytes: choose smaller --nx/--ny", bytes);
    mprotect(p, (size_t)page, PROT_NONE);
    mprotect(p + page + len, (size_t)page, PROT_NONE);
    return (double *)(p + page);
}

static void init_row(lattice *l, double *a, int y) {
    for (int q = 0; q < Q; q++)
        for (int x = 0; x < l->nx; x++) a[idx(l, q, y, x)] = 1.0 + (double)((x * 7 + y * 3 + q) % 11) / 8.0;
}

/* The numa_maps line of the mapping holding addr: the last one starting at or below it. */
static void print_numa_maps_as(const char *tag, const char *name, const void *addr) {
    char line[4096], best[4096] = "";
    unsigned long want = (unsigned long)addr, bstart = 0;
    FILE *f = fopen("/proc/self/numa_maps", "r");
    if (!f) { printf("%s kernel=datamap array=%s unavailable\n", tag, name); return; }
    while (fgets(line, sizeof line, f)) {
        unsigned long start = strtoul(line, NULL, 16);
        if (start <= want && start >= bstart) { bstart = start; strcpy(best, line); }
    }
    fclose(f);
    best[strcspn(best, "\n")] = '\0';
    if (best[0]) printf("%s kernel=datamap array=%s %s\n", tag, name, best);
    else printf("%s kernel=datamap array=%s unavailable\n", tag, name);
}

static void print_numa_maps(const char *name, const void *addr) {
    print_numa_maps_as("numa_maps", name, addr);
}

/* kernel.numa_balancing: 0 off, 1 on (pages migrate towards their users), -1 unknown. */
static int numa_balancing(void) {
    int v = -1;
    FILE *f = fopen("/proc/sys/kernel/numa_balancing", "r");
    if (f) { if (fscanf(f, "%d", &v) != 1) v = -1; fclose(f); }
    return v;
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    static const char *const inits[] = {"serial", "parallel", NULL};
    static struct option opts[] = {{"nx", 1, 0, 'x'}, {"ny", 1, 0, 'y'}, {"init", 1, 0, 'i'}, {0, 0, 0, 0}};
    lattice l = {0, 0, 512, 512, 0.6};
    int init = 1, opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'x': l.nx = (int)ka_long("--nx", optarg, 2, 1 << 20); break;
        case 'y': l.ny = (int)ka_long("--ny", optarg, 2, 1 << 20); break;
        case 'i': init = ka_choice("--init", optarg, inits); break;
        default: ka_die("usage: datamap [--nx N] [--ny N] [--init serial|parallel]");
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    size_t bytes = (size_t)Q * l.nx * l.ny * sizeof(double);
    l.f = map_array(bytes);
    l.g = map_array(bytes);
    double *f0 = l.f, *g0 = l.g;
    if (init == 0) {
        for (int y = 0; y < l.ny; y++) { init_row(&l, l.f, y); init_row(&l, l.g, y); }
    } else {
#pragma omp parallel for schedule(static)
        for (int y = 0; y < l.ny; y++) { init_row(&l, l.f, y); init_row(&l, l.g, y); }
    }
    printf("sysctl kernel=datamap numa_balancing=%d\n", numa_balancing());
    print_numa_maps_as("numa_maps_init", "f", f0);
    print_numa_maps_as("numa_maps_init", "g", g0);
    double mass0 = 0.0;
    for (size_t i = 0; i < bytes / sizeof(double); i++) mass0 += l.f[i];
    sl_config cfg = sl_default_config();
    sl_result r = sl_measure(&cfg, step, &l, NULL);
    if (ka_corrupt()) l.f[0] += 1.0;
    double mass = 0.0;
    for (size_t i = 0; i < bytes / sizeof(double); i++) mass += l.f[i];
    double rel = fabs(mass - mass0) / mass0;
    int threads = omp_get_max_threads();
    printf("result kernel=datamap init=%s nx=%d ny=%d threads=%d mlups=%.6g", inits[init], l.nx, l.ny,
           threads, (double)l.nx * l.ny / r.mean / 1e6);
    sl_print_fields(&r);
    printf("\ncheck kernel=datamap mass0=%.17g mass=%.17g rel_err=%.3g ok=%d\n", mass0, mass, rel, rel < 1e-9);
    /* where each thread ran the compute loop, and which rows it owned */
#pragma omp parallel num_threads(threads)
    {
        int t = omp_get_thread_num(), n = omp_get_num_threads();
        int cpu = sched_getcpu();
        int node = numa_available() < 0 ? 0 : numa_node_of_cpu(cpu);
        long lo = (long)l.ny / n * t + (t < l.ny % n ? t : l.ny % n);
        long hi = lo + l.ny / n + (t < l.ny % n);
#pragma omp critical
        printf("thread kernel=datamap thread=%d cpu=%d node=%d row_lo=%ld row_hi=%ld rows=%d\n",
               t, cpu, node, lo, hi, l.ny);
    }
    print_numa_maps("f", f0);
    print_numa_maps("g", g0);
    return 0;
}
