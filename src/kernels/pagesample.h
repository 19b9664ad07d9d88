/* pagesample's inner interface between the sampler (pagesample.c) and its system-call
 * wrappers (pagesample_io.c). Nothing here is exported from libpagesample.so. */
#ifndef PAGESAMPLE_H
#define PAGESAMPLE_H

#include <stddef.h>

#define PS_HIDDEN __attribute__((visibility("hidden")))
#define PS_PIN_MAX 8 /* ranges one call pins by slot; more pause the sampler for the call */

/* The tracked ranges one system call touches. While pinned they hold no armed page and the
 * sampler arms none of them; an armed page given back is counted as the calling thread's
 * access, as the fault the kernel does not raise would have been. */
typedef struct {
    int slot[PS_PIN_MAX];
    int n;
    int paused;  /* no slot was free: the sampler arms nothing until ps_unpin */
} ps_pins;

#define PS_PINS_INIT {{0}, 0, 0}

PS_HIDDEN void ps_pin(ps_pins *p, const void *buf, size_t len);
PS_HIDDEN void ps_unpin(ps_pins *p); /* keeps errno */
/* Memory the kernel writes to on its own (signal stacks, stdio buffers): never armed again. */
PS_HIDDEN void ps_keep(const void *buf, size_t len);

#endif
