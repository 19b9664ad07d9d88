/* NUMA copy matrix of the Golenkov et al. study.
 *
 *   numacopy [--size 500M] [--from LIST] [--to LIST] [--store auto|plain|nt]
 *
 * For every pair (i, j): the thread runs on node i (libnuma), the source block
 * is allocated on node i and the destination on node j; a sample is the time
 * of one copy. On a one-node machine the matrix is 1 x 1, still measured.
 * Output: one `result` line per pair with GB/s, and per pair a `check` line:
 * the destination holds the source (KERNEL_CORRUPT=1 breaks one word) and
 * its pages are on node j. gbps counts the bytes copied, traffic_gbps the
 * bytes read plus written (likwid-bench's convention).
 */
#include "kargs.h"
#include "statloop.h"
#include "store.h"

#include <getopt.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libnuma's own warnings would add a second line to our one-line errors */
void numa_warn(int num, char *fmt, ...) { (void)num; (void)fmt; }

typedef struct { double *dst; const double *src; size_t words; int nt; } copy_ctx;

static double copy_sample(void *p) {
    copy_ctx *c = p;
    double t0 = sl_now();
    copy_block(c->dst, c->src, c->words, c->nt);
    return sl_now() - t0;
}

/* Node of the pages of [p, p+bytes): -1 when pages are on different nodes. */
static int pages_node(void *p, size_t bytes) {
    size_t page = (size_t)numa_pagesize(), n = bytes / page, step = n > 64 ? n / 64 : 1;
    int node = -2;
    for (size_t i = 0; i < n; i += step) {
        void *addr = (char *)p + i * page;
        int status = -1;
        if (move_pages(0, 1, &addr, NULL, &status, 0) != 0 || status < 0) return -1;
        if (node == -2) node = status;
        else if (node != status) return -1;
    }
    return node;
}

static int node_list(const char *what, const char *text, int *out, int max_node) {
    struct bitmask *bm = numa_parse_nodestring(text);
    if (!bm) ka_die("%s must be NUMA nodes of this machine like 0,1 or 0-%d, got '%s'", what, max_node, text);
    int n = 0;
    for (int i = 0; i <= max_node; i++) if (numa_bitmask_isbitset(bm, i)) out[n++] = i;
    numa_bitmask_free(bm);
    return n;
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    if (numa_available() < 0) ka_die("libnuma reports no NUMA support on this system");
    static const char *const stores[] = {"auto", "plain", "nt", NULL};
    static struct option opts[] = {
        {"size", 1, 0, 's'}, {"from", 1, 0, 'f'}, {"to", 1, 0, 't'}, {"store", 1, 0, 'S'}, {0, 0, 0, 0}};
    int max_node = numa_max_node(), opt, store = 0;
    int *from = calloc((size_t)max_node + 1, sizeof(int)), *to = calloc((size_t)max_node + 1, sizeof(int));
    int nfrom = 0, nto = 0;
    size_t size = 500u << 20;
    numa_set_strict(1);
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 's': size = ka_size("--size", optarg, 4096, (size_t)1 << 40); break;
        case 'f': nfrom = node_list("--from", optarg, from, max_node); break;
        case 't': nto = node_list("--to", optarg, to, max_node); break;
        case 'S': store = ka_choice("--store", optarg, stores); break;
        default: ka_die("usage: numacopy [--size S] [--from NODES] [--to NODES] [--store auto|plain|nt]");
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    if (size % 4096) ka_die("--size must be a multiple of 4096 bytes, got %zu", size);
    struct bitmask *mems = numa_get_mems_allowed();
    if (!nfrom) for (int i = 0; i <= max_node; i++) if (numa_bitmask_isbitset(mems, i)) from[nfrom++] = i;
    if (!nto) for (int i = 0; i <= max_node; i++) if (numa_bitmask_isbitset(mems, i)) to[nto++] = i;
    sl_config cfg = sl_default_config();
    int nt = store == 2 || (store == 0 && size > last_level_cache());
    int all_ok = 1;
    for (int a = 0; a < nfrom; a++) {
        int i = from[a];
        if (numa_run_on_node(i) != 0) ka_die("cannot run on NUMA node %d (not allowed here?)", i);
        for (int b = 0; b < nto; b++) {
            int j = to[b];
            double *src = numa_alloc_onnode(size, i), *dst = numa_alloc_onnode(size, j);
            if (!src || !dst) ka_die("cannot allocate %zu bytes on nodes %d and %d: choose a smaller --size", size, i, j);
            copy_ctx c = {dst, src, size / sizeof(double), nt};
            for (size_t w = 0; w < c.words; w++) { src[w] = (double)(w % 1000003) + i; dst[w] = -1.0; }
            sl_result r = sl_measure(&cfg, copy_sample, &c, NULL);
            if (ka_corrupt()) dst[c.words / 3] += 1.0;
            size_t wrong = 0;
            for (size_t w = 0; w < c.words; w++) wrong += dst[w] != (double)(w % 1000003) + i;
            int src_node = pages_node(src, size), dst_node = pages_node(dst, size);
            int ok = wrong == 0 && dst_node == j;
            all_ok &= ok;
            printf("result kernel=numacopy run_node=%d src_node=%d dst_node=%d bytes=%zu store=%s gbps=%.6g traffic_gbps=%.6g",
                   i, i, j, size, nt ? "nt" : "plain", (double)size / r.mean / 1e9, 2.0 * (double)size / r.mean / 1e9);
            sl_print_fields(&r);
            printf("\ncheck kernel=numacopy run_node=%d dst_node=%d words_wrong=%zu src_pages_node=%d "
                   "dst_pages_node=%d ok=%d\n", i, j, wrong, src_node, dst_node, ok);
            numa_free(src, size); numa_free(dst, size);
        }
    }
    printf("matrix kernel=numacopy nodes_from=%d nodes_to=%d ok=%d\n", nfrom, nto, all_ok);
    return 0;
}
