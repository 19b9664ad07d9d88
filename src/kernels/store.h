/* Streaming store and copy loops of the memory kernels.
 * Non-temporal stores bypass the cache, as likwid-bench's *_mem kernels do:
 * for arrays far larger than the last-level cache they avoid the read for
 * ownership and are the fastest way to write memory. */
#ifndef STORE_H
#define STORE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#ifdef __SSE2__
#include <immintrin.h>
#endif

/* Portable builds (no -march) keep the wide paths through runtime dispatch:
 * the non-temporal loops are compiled for AVX with the target attribute and
 * picked when the CPU has it; the plain loops are cloned per instruction set
 * (GCC/Clang target_clones, resolved once at load time). Under -march=native
 * (make ARCH_FLAGS=-march=native) the compiler may inline the native path. */
#if defined(__x86_64__) && defined(__has_attribute)
#if __has_attribute(target_clones)
#define STORE_CLONES __attribute__((target_clones("avx512f", "avx2", "avx", "default")))
#endif
#endif
#ifndef STORE_CLONES
#define STORE_CLONES
#endif

#if defined(__x86_64__)
#define STORE_HAVE_AVX_PATH 1
__attribute__((target("avx"), noinline))
static void store_nt_avx(double *restrict p, size_t n, double v) {
    __m256d x = _mm256_set1_pd(v);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_stream_pd(p + i, x); _mm256_stream_pd(p + i + 4, x);
        _mm256_stream_pd(p + i + 8, x); _mm256_stream_pd(p + i + 12, x);
    }
    for (; i < n; i++) p[i] = v;
    _mm_sfence();
}

__attribute__((target("avx"), noinline))
static void copy_nt_avx(double *restrict d, const double *restrict s, size_t n) {
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256d a = _mm256_load_pd(s + i), b = _mm256_load_pd(s + i + 4);
        __m256d c = _mm256_load_pd(s + i + 8), e = _mm256_load_pd(s + i + 12);
        _mm256_stream_pd(d + i, a); _mm256_stream_pd(d + i + 4, b);
        _mm256_stream_pd(d + i + 8, c); _mm256_stream_pd(d + i + 12, e);
    }
    for (; i < n; i++) d[i] = s[i];
    _mm_sfence();
}

/* True when this CPU runs the AVX paths (checked once). */
static inline int store_cpu_avx(void) {
    static int avx = -1;
    if (avx < 0) { __builtin_cpu_init(); avx = __builtin_cpu_supports("avx") != 0; }
    return avx;
}
#endif

STORE_CLONES
static void store_plain(double *restrict p, size_t n, double v) {
    for (size_t i = 0; i < n; i++) p[i] = v;
}

STORE_CLONES
static void copy_plain(double *restrict d, const double *restrict s, size_t n) {
    for (size_t i = 0; i < n; i++) d[i] = s[i];
}

/* Writes v to p[0..n); p 64-byte aligned. */
static inline void store_block(double *restrict p, size_t n, double v, int nt) {
#ifdef STORE_HAVE_AVX_PATH
    if (nt && store_cpu_avx()) { store_nt_avx(p, n, v); return; }
#endif
#if defined(__SSE2__)
    if (nt) {
        __m128d x = _mm_set1_pd(v);
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            _mm_stream_pd(p + i, x); _mm_stream_pd(p + i + 2, x);
            _mm_stream_pd(p + i + 4, x); _mm_stream_pd(p + i + 6, x);
        }
        for (; i < n; i++) p[i] = v;
        _mm_sfence();
        return;
    }
#endif
    (void)nt;
    store_plain(p, n, v);
}

/* Copies n doubles from s to d, both 64-byte aligned. */
static inline void copy_block(double *restrict d, const double *restrict s, size_t n, int nt) {
#ifdef STORE_HAVE_AVX_PATH
    if (nt && store_cpu_avx()) { copy_nt_avx(d, s, n); return; }
#endif
    (void)nt;
    copy_plain(d, s, n);
}

/* Largest data cache of this CPU in bytes (guess of 32 MiB when unknown). */
static inline size_t last_level_cache(void) {
    long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    long c = l3 > 0 ? l3 : l2 > 0 ? l2 : 32L << 20;
    return (size_t)c;
}

#endif
