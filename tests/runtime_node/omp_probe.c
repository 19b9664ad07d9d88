/* Prints, per OpenMP thread, the CPUs it is bound to: "T <rank> <thread> <cpulist>"
 * (the rank is $OMPI_COMM_WORLD_RANK, or 0). Run under fake_node.so, the CPUs are the
 * mask the runtime asked for. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const char *r = getenv("OMPI_COMM_WORLD_RANK");
    int rank = r ? atoi(r) : 0;
    int n = 0;
    #pragma omp parallel
    {
        #pragma omp single
        n = omp_get_num_threads();
    }
    char *lines[8192] = {0};
    #pragma omp parallel
    {
        #pragma omp barrier     /* every thread created (and pinned by a wrapper) first */
        cpu_set_t set;
        sched_getaffinity(0, sizeof set, &set);
        char *buf = malloc(65536);
        int len = snprintf(buf, 65536, "T %d %d ", rank, omp_get_thread_num());
        int first = 1;
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) { len += snprintf(buf + len, 65536 - len, first ? "%d" : ",%d", c); first = 0; }
        lines[omp_get_thread_num()] = buf;
    }
    for (int t = 0; t < n && t < 8192; t++) puts(lines[t]);
    return 0;
}
