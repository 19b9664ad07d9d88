/* Argument checking shared by the kernels: one clear line and exit 2 on bad input. */
#ifndef KARGS_H
#define KARGS_H

#include <stddef.h>

/* Prints "<prog>: <message>" and exits with status 2. */
void ka_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void ka_set_prog(const char *argv0);

/* Whole number in [lo, hi]; `what` names the argument in the message. */
long ka_long(const char *what, const char *text, long lo, long hi);
double ka_double(const char *what, const char *text, double lo, double hi);
/* A size with optional K/M/G suffix (powers of 1024), in bytes, within [lo, hi]. */
size_t ka_size(const char *what, const char *text, size_t lo, size_t hi);
/* Comma-separated list of sizes; returns the count, fills at most `max`. */
int ka_size_list(const char *what, const char *text, size_t *out, int max, size_t lo, size_t hi);
/* One of the NULL-terminated `choices`; returns its index. */
int ka_choice(const char *what, const char *text, const char *const *choices);

/* The same for environment variables (`dflt` when unset). */
long ka_env_long(const char *name, long dflt, long lo, long hi);
double ka_env_double(const char *name, double dflt, double lo, double hi);

/* KERNEL_CORRUPT=1: the kernel damages its result on purpose (sanity tests). */
int ka_corrupt(void);

#endif
