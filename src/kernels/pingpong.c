/* MPI ping-pong of the Golenkov et al. study: two ranks, one message size at a time.
 *
 *   mpirun -np 2 pingpong [--sizes 1K,128M]
 *
 * Rank 0 sends a message, rank 1 returns it; a sample is half the round
 * trip. Rank 1 answers until rank 0 sends the stop tag, so the measurement
 * loop can choose the number of samples freely. Every message carries a
 * pattern that depends on the sample; both ranks check it (KERNEL_CORRUPT=1
 * makes rank 1 return a damaged payload). Output (rank 0): one `result` line
 * per size with latency and bandwidth, a `check` line per size, and the node
 * names of both ranks (same node or two nodes).
 */
#include "kargs.h"
#include "statloop.h"

#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_PING 1
#define TAG_STOP 2
#define MAX_SIZES 32

typedef struct { unsigned char *buf; size_t bytes; unsigned seq; long bad; } pp_ctx;

static unsigned char pattern(size_t i, unsigned seq) { return (unsigned char)(i * 31u + seq * 7u + 1u); }

static void fill(unsigned char *b, size_t n, unsigned seq) { for (size_t i = 0; i < n; i++) b[i] = pattern(i, seq); }

static long wrong(const unsigned char *b, size_t n, unsigned seq) {
    long bad = 0;
    for (size_t i = 0; i < n; i++) bad += b[i] != pattern(i, seq);
    return bad;
}

static double ping(void *p) {
    pp_ctx *c = p;
    c->seq++;
    fill(c->buf, c->bytes, c->seq);
    double t0 = MPI_Wtime();
    MPI_Send(c->buf, (int)c->bytes, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD);
    MPI_Recv(c->buf, (int)c->bytes, MPI_BYTE, 1, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double dt = (MPI_Wtime() - t0) / 2.0;
    c->bad += wrong(c->buf, c->bytes, c->seq);
    return dt;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    ka_set_prog(argv[0]);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static struct option opts[] = {{"sizes", 1, 0, 's'}, {0, 0, 0, 0}};
    size_t sizes[MAX_SIZES] = {1024, 128u << 20};
    int nsizes = 2, opt;
    while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (opt == 's') nsizes = ka_size_list("--sizes", optarg, sizes, MAX_SIZES, 1, (size_t)1 << 30);
        else ka_die("usage: mpirun -np 2 pingpong [--sizes 1K,128M]");
    }
    if (optind < argc) ka_die("unexpected argument '%s' (options only)", argv[optind]);
    if (size != 2) ka_die("needs exactly 2 MPI ranks, got %d (mpirun -np 2)", size);
    char host[MPI_MAX_PROCESSOR_NAME] = "", peer[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(host, &len);
    MPI_Sendrecv(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - rank, 0, peer, MPI_MAX_PROCESSOR_NAME,
                 MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    size_t max = 0;
    for (int i = 0; i < nsizes; i++) if (sizes[i] > max) max = sizes[i];
    unsigned char *buf = malloc(max);
    if (!buf) ka_die("cannot allocate %zu bytes: choose smaller --sizes", max);
    sl_config cfg = sl_default_config();
    int corrupt = ka_corrupt();
    for (int i = 0; i < nsizes; i++) {
        if (rank == 0) {
            pp_ctx c = {buf, sizes[i], 0, 0};
            sl_result r = sl_measure(&cfg, ping, &c, NULL);
            MPI_Send(buf, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
            long peer_bad;
            MPI_Recv(&peer_bad, 1, MPI_LONG, 1, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("result kernel=pingpong bytes=%zu placement=%s latency_us=%.6g gbps=%.6g",
                   sizes[i], strcmp(host, peer) ? "two-nodes" : "same-node", r.mean * 1e6,
                   (double)sizes[i] / r.mean / 1e9);
            sl_print_fields(&r);
            printf("\ncheck kernel=pingpong bytes=%zu messages=%u bytes_wrong_at_0=%ld bytes_wrong_at_1=%ld ok=%d\n",
                   sizes[i], c.seq, c.bad, peer_bad, c.bad == 0 && peer_bad == 0 && c.seq > 0);
        } else {
            long bad = 0;
            unsigned seq = 0;
            for (;;) {
                MPI_Status st;
                MPI_Recv(buf, (int)sizes[i], MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                if (st.MPI_TAG == TAG_STOP) break;
                bad += wrong(buf, sizes[i], ++seq);
                if (corrupt) buf[sizes[i] / 2] ^= 0xff;
                MPI_Send(buf, (int)sizes[i], MPI_BYTE, 0, TAG_PING, MPI_COMM_WORLD);
            }
            MPI_Send(&bad, 1, MPI_LONG, 0, TAG_STOP, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) printf("hosts kernel=pingpong rank0=%s rank1=%s\n", host, peer);
    free(buf);
    MPI_Finalize();
    return 0;
}
