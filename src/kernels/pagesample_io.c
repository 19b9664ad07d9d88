/* pagesample's system-call wrappers: the kernel never meets an armed page.
 *
 * The kernel answers a system call that touches a PROT_NONE page with EFAULT (or a short
 * count) and raises no SIGSEGV, so the sampler would make read() into a tracked buffer fail
 * where the program ran fine without it. Each libc call below that hands the kernel a
 * buffer pins its ranges first (ps_pin: armed pages given back and counted as the caller's
 * access, none armed until the call returns), then calls libc's own function. Memory the
 * kernel fills on its own, outside any call (signal stacks, a thread stack the program
 * allocated, a stdio buffer the program set), is kept off the sampler for good (ps_keep).
 * libc's internal calls (fread's read, fputs's write) do not pass here; their buffers are
 * the program's (pinned by the stdio wrappers) or libc's (never tracked, pagesample.c).
 * What is not covered is listed in pagesample.c's header.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pagesample.h"

#undef fread_unlocked  /* macros of bits/stdio.h under optimisation: the functions are meant */
#undef fwrite_unlocked

/* libc's function of this name, looked up once. */
#define NEXT(name) \
    static __typeof__(name) *next_; \
    if (!next_) next_ = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* rc = libc's call, with the ranges pinned by PIN_STEPS around it. */
#define PINNED(type, name, PIN_STEPS, ...) \
    NEXT(name); \
    ps_pins pins_ = PS_PINS_INIT; \
    PIN_STEPS; \
    type rc_ = next_(__VA_ARGS__); \
    ps_unpin(&pins_); \
    return rc_

static void pin_iov(ps_pins *p, const struct iovec *iov, int n) {
    if (n <= 0 || !iov) return;
    ps_pin(p, iov, (size_t)n * sizeof *iov);
    for (int i = 0; i < n; i++) ps_pin(p, iov[i].iov_base, iov[i].iov_len);
}

static void pin_msg(ps_pins *p, const struct msghdr *m) {
    if (!m) return;
    ps_pin(p, m, sizeof *m);
    ps_pin(p, m->msg_name, m->msg_namelen);
    ps_pin(p, m->msg_control, m->msg_controllen);
    pin_iov(p, m->msg_iov, (int)m->msg_iovlen);
}

static void pin_addr(ps_pins *p, const void *addr, socklen_t *len) {
    if (!len) return;
    ps_pin(p, len, sizeof *len);
    ps_pin(p, addr, *len);
}

/* ---- files and pipes ---- */

ssize_t read(int fd, void *b, size_t n) { PINNED(ssize_t, read, ps_pin(&pins_, b, n), fd, b, n); }
ssize_t write(int fd, const void *b, size_t n) { PINNED(ssize_t, write, ps_pin(&pins_, b, n), fd, b, n); }
ssize_t pread(int fd, void *b, size_t n, off_t o) { PINNED(ssize_t, pread, ps_pin(&pins_, b, n), fd, b, n, o); }
ssize_t pwrite(int fd, const void *b, size_t n, off_t o) {
    PINNED(ssize_t, pwrite, ps_pin(&pins_, b, n), fd, b, n, o);
}
ssize_t pread64(int fd, void *b, size_t n, off64_t o) { PINNED(ssize_t, pread64, ps_pin(&pins_, b, n), fd, b, n, o); }
ssize_t pwrite64(int fd, const void *b, size_t n, off64_t o) {
    PINNED(ssize_t, pwrite64, ps_pin(&pins_, b, n), fd, b, n, o);
}
ssize_t readv(int fd, const struct iovec *v, int k) { PINNED(ssize_t, readv, pin_iov(&pins_, v, k), fd, v, k); }
ssize_t writev(int fd, const struct iovec *v, int k) { PINNED(ssize_t, writev, pin_iov(&pins_, v, k), fd, v, k); }
ssize_t preadv(int fd, const struct iovec *v, int k, off_t o) {
    PINNED(ssize_t, preadv, pin_iov(&pins_, v, k), fd, v, k, o);
}
ssize_t pwritev(int fd, const struct iovec *v, int k, off_t o) {
    PINNED(ssize_t, pwritev, pin_iov(&pins_, v, k), fd, v, k, o);
}
ssize_t preadv64(int fd, const struct iovec *v, int k, off64_t o) {
    PINNED(ssize_t, preadv64, pin_iov(&pins_, v, k), fd, v, k, o);
}
ssize_t pwritev64(int fd, const struct iovec *v, int k, off64_t o) {
    PINNED(ssize_t, pwritev64, pin_iov(&pins_, v, k), fd, v, k, o);
}
ssize_t preadv2(int fd, const struct iovec *v, int k, off_t o, int fl) {
    PINNED(ssize_t, preadv2, pin_iov(&pins_, v, k), fd, v, k, o, fl);
}
ssize_t pwritev2(int fd, const struct iovec *v, int k, off_t o, int fl) {
    PINNED(ssize_t, pwritev2, pin_iov(&pins_, v, k), fd, v, k, o, fl);
}
ssize_t getrandom(void *b, size_t n, unsigned fl) { PINNED(ssize_t, getrandom, ps_pin(&pins_, b, n), b, n, fl); }

/* _FORTIFY_SOURCE builds (Ubuntu's default) call these instead */
ssize_t __read_chk(int fd, void *b, size_t n, size_t bl);
ssize_t __read_chk(int fd, void *b, size_t n, size_t bl) {
    PINNED(ssize_t, __read_chk, ps_pin(&pins_, b, n), fd, b, n, bl);
}
ssize_t __pread_chk(int fd, void *b, size_t n, off_t o, size_t bl);
ssize_t __pread_chk(int fd, void *b, size_t n, off_t o, size_t bl) {
    PINNED(ssize_t, __pread_chk, ps_pin(&pins_, b, n), fd, b, n, o, bl);
}
ssize_t __pread64_chk(int fd, void *b, size_t n, off64_t o, size_t bl);
ssize_t __pread64_chk(int fd, void *b, size_t n, off64_t o, size_t bl) {
    PINNED(ssize_t, __pread64_chk, ps_pin(&pins_, b, n), fd, b, n, o, bl);
}

/* ---- sockets ---- */

ssize_t recv(int fd, void *b, size_t n, int fl) { PINNED(ssize_t, recv, ps_pin(&pins_, b, n), fd, b, n, fl); }
ssize_t send(int fd, const void *b, size_t n, int fl) { PINNED(ssize_t, send, ps_pin(&pins_, b, n), fd, b, n, fl); }
ssize_t recvfrom(int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *al) {
    PINNED(ssize_t, recvfrom, (ps_pin(&pins_, b, n), pin_addr(&pins_, a, al)), fd, b, n, fl, a, al);
}
ssize_t sendto(int fd, const void *b, size_t n, int fl, const struct sockaddr *a, socklen_t al) {
    PINNED(ssize_t, sendto, (ps_pin(&pins_, b, n), ps_pin(&pins_, a, al)), fd, b, n, fl, a, al);
}
ssize_t recvmsg(int fd, struct msghdr *m, int fl) { PINNED(ssize_t, recvmsg, pin_msg(&pins_, m), fd, m, fl); }
ssize_t sendmsg(int fd, const struct msghdr *m, int fl) { PINNED(ssize_t, sendmsg, pin_msg(&pins_, m), fd, m, fl); }
ssize_t __recv_chk(int fd, void *b, size_t n, size_t bl, int fl);
ssize_t __recv_chk(int fd, void *b, size_t n, size_t bl, int fl) {
    PINNED(ssize_t, __recv_chk, ps_pin(&pins_, b, n), fd, b, n, bl, fl);
}
ssize_t __recvfrom_chk(int fd, void *b, size_t n, size_t bl, int fl, struct sockaddr *a, socklen_t *al);
ssize_t __recvfrom_chk(int fd, void *b, size_t n, size_t bl, int fl, struct sockaddr *a, socklen_t *al) {
    PINNED(ssize_t, __recvfrom_chk, (ps_pin(&pins_, b, n), pin_addr(&pins_, a, al)), fd, b, n, bl, fl, a, al);
}

/* the local side only: another process's tracked pages are its sampler's */
ssize_t process_vm_readv(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r, unsigned long rn,
                         unsigned long fl) {
    PINNED(ssize_t, process_vm_readv, (pin_iov(&pins_, l, (int)ln), ps_pin(&pins_, r, rn * sizeof *r)),
           pid, l, ln, r, rn, fl);
}
ssize_t process_vm_writev(pid_t pid, const struct iovec *l, unsigned long ln, const struct iovec *r, unsigned long rn,
                          unsigned long fl) {
    PINNED(ssize_t, process_vm_writev, (pin_iov(&pins_, l, (int)ln), ps_pin(&pins_, r, rn * sizeof *r)),
           pid, l, ln, r, rn, fl);
}

/* ---- stdio: large transfers go between the program's buffer and the kernel directly ---- */

size_t fread(void *b, size_t s, size_t n, FILE *f) { PINNED(size_t, fread, ps_pin(&pins_, b, s * n), b, s, n, f); }
size_t fwrite(const void *b, size_t s, size_t n, FILE *f) {
    PINNED(size_t, fwrite, ps_pin(&pins_, b, s * n), b, s, n, f);
}
size_t fread_unlocked(void *b, size_t s, size_t n, FILE *f) {
    PINNED(size_t, fread_unlocked, ps_pin(&pins_, b, s * n), b, s, n, f);
}
size_t fwrite_unlocked(const void *b, size_t s, size_t n, FILE *f) {
    PINNED(size_t, fwrite_unlocked, ps_pin(&pins_, b, s * n), b, s, n, f);
}
size_t __fread_chk(void *b, size_t bl, size_t s, size_t n, FILE *f);
size_t __fread_chk(void *b, size_t bl, size_t s, size_t n, FILE *f) {
    PINNED(size_t, __fread_chk, ps_pin(&pins_, b, s * n), b, bl, s, n, f);
}
size_t __fread_unlocked_chk(void *b, size_t bl, size_t s, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *b, size_t bl, size_t s, size_t n, FILE *f) {
    PINNED(size_t, __fread_unlocked_chk, ps_pin(&pins_, b, s * n), b, bl, s, n, f);
}
int fputs(const char *s, FILE *f) { PINNED(int, fputs, ps_pin(&pins_, s, strlen(s)), s, f); }
int fputs_unlocked(const char *s, FILE *f) { PINNED(int, fputs_unlocked, ps_pin(&pins_, s, strlen(s)), s, f); }
int puts(const char *s) { PINNED(int, puts, ps_pin(&pins_, s, strlen(s)), s); }

/* ---- printf family: libc writes a long argument (or format) to the kernel from the program's
 * memory, through its internal write, past the wrappers above. The text is formatted in memory
 * first (a fault there is an ordinary sampled access), then written by fwrite or write, which
 * pin it. FLAG is the _chk forms' fortify level (-1: the plain forms). ---- */

int __vsnprintf_chk(char *s, size_t n, int flag, size_t slen, const char *fmt, va_list ap);
int __vasprintf_chk(char **s, int flag, const char *fmt, va_list ap);

/* The formatted length; the text in STACK when it fits (CAP bytes), else in *HEAP. */
static int format(char *stack, size_t cap, char **heap, int flag, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = flag < 0 ? vsnprintf(stack, cap, fmt, again) : __vsnprintf_chk(stack, cap, flag, cap, fmt, again);
    va_end(again);
    *heap = NULL;
    if (n < 0 || (size_t)n < cap) return n;
    return flag < 0 ? vasprintf(heap, fmt, ap) : __vasprintf_chk(heap, flag, fmt, ap);
}

static int print_file(FILE *f, int flag, const char *fmt, va_list ap) {
    char stack[1024], *heap;
    int n = format(stack, sizeof stack, &heap, flag, fmt, ap);
    if (n > 0 && fwrite(heap ? heap : stack, 1, (size_t)n, f) != (size_t)n) n = -1;
    int saved = errno;
    free(heap);
    errno = saved;
    return n;
}

static int print_fd(int fd, int flag, const char *fmt, va_list ap) {
    char stack[1024], *heap;
    int n = format(stack, sizeof stack, &heap, flag, fmt, ap);
    const char *p = heap ? heap : stack;
    for (size_t done = 0; n > 0 && done < (size_t)n;) {
        ssize_t k = write(fd, p + done, (size_t)n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) n = -1;
        else done += (size_t)k;
    }
    int saved = errno;
    free(heap);
    errno = saved;
    return n;
}

#define VA_CALL(call) \
    va_list ap; \
    va_start(ap, fmt); \
    int rc_ = call; \
    va_end(ap); \
    return rc_

int vfprintf(FILE *f, const char *fmt, va_list ap) { return print_file(f, -1, fmt, ap); }
int vprintf(const char *fmt, va_list ap) { return print_file(stdout, -1, fmt, ap); }
int vdprintf(int fd, const char *fmt, va_list ap) { return print_fd(fd, -1, fmt, ap); }
int fprintf(FILE *f, const char *fmt, ...) { VA_CALL(print_file(f, -1, fmt, ap)); }
int printf(const char *fmt, ...) { VA_CALL(print_file(stdout, -1, fmt, ap)); }
int dprintf(int fd, const char *fmt, ...) { VA_CALL(print_fd(fd, -1, fmt, ap)); }
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap) { return print_file(f, flag, fmt, ap); }
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vprintf_chk(int flag, const char *fmt, va_list ap) { return print_file(stdout, flag, fmt, ap); }
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap) { return print_fd(fd, flag, fmt, ap); }
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...) { VA_CALL(print_file(f, flag, fmt, ap)); }
int __printf_chk(int flag, const char *fmt, ...);
int __printf_chk(int flag, const char *fmt, ...) { VA_CALL(print_file(stdout, flag, fmt, ap)); }
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __dprintf_chk(int fd, int flag, const char *fmt, ...) { VA_CALL(print_fd(fd, flag, fmt, ap)); }

/* A buffer the program gives stdio is filled by libc's own read(): kept off the sampler. */
int setvbuf(FILE *f, char *b, int mode, size_t n) {
    NEXT(setvbuf);
    if (b && mode != _IONBF) ps_keep(b, n);
    return next_(f, b, mode, n);
}
void setbuffer(FILE *f, char *b, size_t n) {
    NEXT(setbuffer);
    if (b) ps_keep(b, n);
    next_(f, b, n);
}
void setbuf(FILE *f, char *b) {
    NEXT(setbuf);
    if (b) ps_keep(b, BUFSIZ);
    next_(f, b);
}

/* ---- stacks: the kernel writes signal frames there, system calls take their locals ---- */

int sigaltstack(const stack_t *ss, stack_t *old) {
    NEXT(sigaltstack);
    if (ss && !(ss->ss_flags & SS_DISABLE)) ps_keep(ss->ss_sp, ss->ss_size);
    return next_(ss, old);
}

int pthread_attr_setstack(pthread_attr_t *a, void *stack, size_t n) {
    NEXT(pthread_attr_setstack);
    ps_keep(stack, n);
    return next_(a, stack, n);
}
