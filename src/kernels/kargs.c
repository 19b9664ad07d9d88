/* Argument checking shared by the kernels (see kargs.h). */
#include "kargs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *prog = "kernel";

void ka_set_prog(const char *argv0) {
    const char *slash = strrchr(argv0, '/');
    prog = slash ? slash + 1 : argv0;
}

void ka_die(const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s: ", prog);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(2);
}

long ka_long(const char *what, const char *text, long lo, long hi) {
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || !*text || *end || errno)
        ka_die("%s must be a whole number in %ld..%ld, got '%s'", what, lo, hi, text ? text : "");
    if (v < lo || v > hi)
        ka_die("%s must be in %ld..%ld, got %ld", what, lo, hi, v);
    return v;
}

double ka_double(const char *what, const char *text, double lo, double hi) {
    char *end;
    errno = 0;
    double v = text ? strtod(text, &end) : 0;
    if (!text || !*text || *end || errno || v != v)
        ka_die("%s must be a number in %g..%g, got '%s'", what, lo, hi, text ? text : "");
    if (v < lo || v > hi)
        ka_die("%s must be in %g..%g, got %g", what, lo, hi, v);
    return v;
}

size_t ka_size(const char *what, const char *text, size_t lo, size_t hi) {
    char *end;
    errno = 0;
    if (!text || !*text || *text == '-')
        ka_die("%s must be a size like 4096, 64K, 500M or 2G, got '%s'", what, text ? text : "");
    double v = strtod(text, &end);
    double mult = 1;
    if (*end && strchr("kKmMgG", *end) && end[1] == '\0') {
        mult = (*end == 'k' || *end == 'K') ? 1024.0 : (*end == 'm' || *end == 'M') ? 1048576.0 : 1073741824.0;
        end++;
    }
    if (*end || errno || !(v >= 0))
        ka_die("%s must be a size like 4096, 64K, 500M or 2G, got '%s'", what, text);
    double bytes = v * mult;
    if (bytes < (double)lo || bytes > (double)hi)
        ka_die("%s must be between %zu and %zu bytes, got '%s'", what, lo, hi, text);
    return (size_t)bytes;
}

int ka_size_list(const char *what, const char *text, size_t *out, int max, size_t lo, size_t hi) {
    if (!text || !*text) ka_die("%s must be a comma-separated list of sizes, got ''", what);
    char *copy = strdup(text), *save = NULL;
    int n = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == max) ka_die("%s takes at most %d entries", what, max);
        out[n++] = ka_size(what, tok, lo, hi);
    }
    free(copy);
    if (!n) ka_die("%s must be a comma-separated list of sizes, got '%s'", what, text);
    return n;
}

int ka_choice(const char *what, const char *text, const char *const *choices) {
    char buf[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (text && strcmp(text, choices[i]) == 0) return i;
        if (i) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
        strncat(buf, choices[i], sizeof buf - strlen(buf) - 1);
    }
    ka_die("%s must be one of %s, got '%s'", what, buf, text ? text : "");
}

long ka_env_long(const char *name, long dflt, long lo, long hi) {
    const char *v = getenv(name);
    return v && *v ? ka_long(name, v, lo, hi) : dflt;
}

double ka_env_double(const char *name, double dflt, double lo, double hi) {
    const char *v = getenv(name);
    return v && *v ? ka_double(name, v, lo, hi) : dflt;
}

int ka_corrupt(void) {
    const char *v = getenv("KERNEL_CORRUPT");
    return v && *v && strcmp(v, "0") != 0;
}
