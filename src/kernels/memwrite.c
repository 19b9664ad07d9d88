/* Memory write tests of the Golenkov et al. study.
 *
 *   memwrite --mode single [--size S | --fraction F] [--blocks 1M,4M,...] [--store auto|plain|nt]
 *       one thread writes a large array sequentially, block after block of k
 *       bytes, for every k of the sweep; a sample is the time of one block.
 *   memwrite --mode threads [--block 500M] [--store ...]
 *       every OpenMP thread writes its own block (500 MB in the study); a
 *       sample is the time until all threads are done. Threads and binding
 *       come from the OpenMP environment (the placement engine sets them).
 *
 * Output: one `result` line per block size, then a `check` line: every word
 * written must hold the last value stored there (KERNEL_CORRUPT=1 breaks one).
 */
#include "kargs.h"
#include "statloop.h"
#include "store.h"

#include <getopt.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#define MAX_BLOCKS 64

typedef struct {
    double *base;
    size_t words, block_words, next_block, nblocks;
    double *last;          /* last value written to each block */
    double counter;
    int nt;
} single_ctx;

static double single_sample(void *p) {
    single_ctx *c = p;
    size_t b = c->next_block;
    c->next_block = (b + 1) % c->nblocks;
    double v = ++c->counter;
    double *dst = c->base + b * c->block_words;
    double t0 = sl_now();
    store_block(dst, c->block_words, v, c->nt);
    double t = sl_now() - t0;
    c->last[b] = v;
    return t;
}

typedef struct {
    double **blocks;
    size_t words;
    int threads;
    double value;
    int nt;
} threads_ctx;

static double threads_sample(void *p) {
    threads_ctx *c = p;
    double v = ++c->value, t0 = 0, t = 0;
#pragma omp parallel num_threads(c->threads)
    {
#pragma omp barrier
#pragma omp master
        t0 = sl_now();
        store_block(c->blocks[omp_get_thread_num()], c->words, v, c->nt);
#pragma omp barrier
#pragma omp master
        t = sl_now() - t0;
    }
    return t;
}

static size_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

static double *alloc_words(size_t words) {
    void *p = NULL;
    if (posix_memalign(&p, 4096, words * sizeof(double)))
        ka_die("cannot allocate %zu bytes: choose a smaller size", words * sizeof(double));
    return p;
}

static void usage(void) {
    ka_die("usage: memwrite --mode single|threads [--size S|--fraction F] [--blocks LIST] "
           "[--block S] [--store auto|plain|nt]");
}

int main(int argc, char **argv) {
    ka_set_prog(argv[0]);
    static const char *const modes[] = {"single", "threads", NULL};
    static const char *const stores[] = {"auto", "plain", "nt", NULL};
    static struct option opts[] = {
        {"mode", 1, 0, 'm'}, {"size", 1, 0, 's'}, {"fraction", 1, 0, 'f'},
        {"blocks", 1, 0, 'b'}, {"block", 1, 0, 'B'}, {"store", 1, 0, 't'}, {0, 0, 0, 0}};
    int mode = 0, store = 0, opt;
    size_t size = 256u << 20, block = 500u << 20;
    double fraction = 0;
    size_t ks[MAX_BLOCKS] = {1u << 20, 4u << 20, 16u << 20, 64u << 20};
    int nk = 4;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (opt) {
        case 'm': mode = ka_choice("--mode", optarg, modes); break;
        case 's': size = ka_size("--size", optarg, 4096, (size_t)1 << 44); break;
        case 'f': fraction = ka_double("--fraction", optarg, 1e-6, 0.9); break;
        case 'b': nk = ka_size_list("--blocks", optarg, ks, MAX_BLOCKS, 4096, (size_t)1 << 40); break;
        case 'B': block = ka_size("--block", optarg, 4096, (size_t)1 << 40); break;
        case 't': store = ka_choice("--store", optarg, stores); break;
        default: usage();
        }
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only, see --mode)", argv[optind]);
    sl_config cfg = sl_default_config();
    int bad = 0;

    if (mode == 0) {
        if (fraction > 0) size = (size_t)(fraction * (double)mem_available());
        size = size / 4096 * 4096;
        for (int i = 0; i < nk; i++) {
            if (ks[i] % sizeof(double)) ka_die("--blocks entries must be multiples of 8 bytes, got %zu", ks[i]);
            if (ks[i] > size) ka_die("--blocks entry %zu is larger than the array (--size %zu)", ks[i], size);
        }
        single_ctx c = {0};
        c.words = size / sizeof(double);
        c.base = alloc_words(c.words);
        c.nt = store == 2 || (store == 0 && size > 2 * last_level_cache());
        store_block(c.base, c.words, 0.0, 0);          /* fault the pages in */
        c.last = calloc(c.words, sizeof *c.last);      /* per block, at most words blocks */
        for (int i = 0; i < nk; i++) {
            c.block_words = ks[i] / sizeof(double);
            c.nblocks = c.words / c.block_words;
            c.next_block = 0;
            for (size_t b = 0; b < c.nblocks; b++) c.last[b] = NAN;
            sl_result r = sl_measure(&cfg, single_sample, &c, NULL);
            if (ka_corrupt()) c.base[c.block_words / 2] = -1.0;
            for (size_t b = 0; b < c.nblocks; b++) {
                if (c.last[b] != c.last[b]) continue;    /* block never written this sweep */
                const double *p = c.base + b * c.block_words;
                for (size_t w = 0; w < c.block_words; w++) bad += p[w] != c.last[b];
            }
            printf("result kernel=memwrite mode=single threads=1 array_bytes=%zu block_bytes=%zu store=%s gbps=%.6g",
                   size, ks[i], c.nt ? "nt" : "plain", (double)ks[i] / r.mean / 1e9);
            sl_print_fields(&r);
            putchar('\n');
        }
        free(c.last); free(c.base);
    } else {
        threads_ctx c = {0};
        if (block % sizeof(double)) ka_die("--block must be a multiple of 8 bytes, got %zu", block);
        c.threads = omp_get_max_threads();
        c.words = block / sizeof(double);
        c.blocks = calloc((size_t)c.threads, sizeof *c.blocks);
        c.nt = store == 2 || (store == 0 && block * c.threads > 2 * last_level_cache());
#pragma omp parallel num_threads(c.threads)
        {   /* each thread faults in its own block: first touch puts it near */
            int t = omp_get_thread_num();
            c.blocks[t] = alloc_words(c.words);
            store_block(c.blocks[t], c.words, 0.0, 0);
        }
        sl_result r = sl_measure(&cfg, threads_sample, &c, NULL);
        if (ka_corrupt()) c.blocks[c.threads - 1][c.words - 1] = -1.0;
        for (int t = 0; t < c.threads; t++)
            for (size_t w = 0; w < c.words; w++) bad += c.blocks[t][w] != c.value;
        printf("result kernel=memwrite mode=threads threads=%d block_bytes=%zu store=%s gbps=%.6g",
               c.threads, block, c.nt ? "nt" : "plain",
               (double)block * c.threads / r.mean / 1e9);
        sl_print_fields(&r);
        putchar('\n');
        for (int t = 0; t < c.threads; t++) free(c.blocks[t]);
        free(c.blocks);
    }
    printf("check kernel=memwrite words_wrong=%d ok=%d\n", bad, bad == 0);
    return 0;
}
