/* The BLAS beside rff's threads: which BLAS R runs on (found at run time),
   its thread count, and the large products (Z'Z, ZZ', ZW') split between
   rff's threads and the BLAS's so that the two levels never run at once and
   the result does not depend on `threads`. Bottom layer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#endif
#include "rff.h"
#include <stdint.h>
#include <stdlib.h>
#ifndef _WIN32
#include <dlfcn.h>
#endif

/* Columns of the output per BLAS call when a product is split into column
   blocks among rff's threads: a fixed partition, so results do not depend
   on the number of threads. */
#define RFF_SPLIT_COLS 128

/* Multiply-adds below which a product in row blocks runs on one thread
   (tens of microseconds of one core's work). */
#define RFF_ROWS_MIN_WORK 262144.0

/* The BLAS R was linked with, told by the thread-control functions it
   exports (R links whichever BLAS the system provides, so they are looked
   up at run time, as threadpoolctl and RhpcBLASctl do): OpenBLAS, BLIS or
   MKL, each with threads of its own; otherwise a BLAS without threads (the
   reference BLAS, or one whose threads cannot be controlled, which is then
   left alone). */
typedef int (*int_void_fn)(void);
typedef void (*void_int_fn)(int);
typedef int64_t (*i64_void_fn)(void);
typedef void (*void_i64_fn)(int64_t);

static int blas_kind = RFF_BLAS_PLAIN;
/* Whether the large products run on rff's own kernel (gemm.c) rather than
   the BLAS: wanted unless switched off (rff_blas_set_own()), and used
   with a BLAS without threads (the reference BLAS) on a processor that
   runs the kernel; under OpenBLAS, for the narrow products split by rows
   only (rff_blas_own_rows()). */
static int own_wanted = 1, own_available = 0;
static int_void_fn openblas_get, mkl_get;
static void_int_fn openblas_set, mkl_set;
static i64_void_fn blis_get;
static void_i64_fn blis_set;
static int_void_fn flexi_get;
static void_int_fn flexi_set;

void rff_blas_detect(void)
{
    own_available = rff_gemm_available();
#ifndef _WIN32
    /* function pointers from dlsym's object pointers, through memcpy as
       POSIX allows */
#define RFF_DLSYM(var, name) do { void *p_ = dlsym(RTLD_DEFAULT, name); \
        memcpy(&var, &p_, sizeof var); } while (0)
    RFF_DLSYM(openblas_get, "openblas_get_num_threads");
    RFF_DLSYM(openblas_set, "openblas_set_num_threads");
    RFF_DLSYM(blis_get, "bli_thread_get_num_threads");
    RFF_DLSYM(blis_set, "bli_thread_set_num_threads");
    RFF_DLSYM(mkl_get, "MKL_Get_Max_Threads");
    RFF_DLSYM(mkl_set, "MKL_Set_Num_Threads");
    RFF_DLSYM(flexi_get, "flexiblas_get_num_threads");
    RFF_DLSYM(flexi_set, "flexiblas_set_num_threads");
#undef RFF_DLSYM
    blas_kind = RFF_BLAS_PLAIN;
    /* FlexiBLAS first: it exports openblas_* names whatever backend it
       loads, and its backend's rounding may change with its threads, so
       it gets the fixed column blocks with its threads held at one, as MKL */
    if (flexi_get && flexi_set) blas_kind = RFF_BLAS_FLEXIBLAS;
    else if (openblas_get && openblas_set) blas_kind = RFF_BLAS_OPENBLAS;
    else if (blis_get && blis_set) blas_kind = RFF_BLAS_BLIS;
    else if (mkl_get && mkl_set) blas_kind = RFF_BLAS_MKL;
#endif
}

int rff_blas_kind(void) { return blas_kind; }

int rff_blas_own(void)
{
    return own_wanted && own_available && blas_kind == RFF_BLAS_PLAIN;
}

/* Whether a product with n columns of c split by rows of c
   (rff_dgemm_rows(): a GLM pass's Z B and Z'R) runs on rff's own kernel:
   as rff_blas_own(), and under OpenBLAS too when the product is narrow
   (rff_gemm_narrow()). There OpenBLAS packs op(a) for every block of 128
   rows, where rff's kernel reads it in place: on 16,000 x 1,224 features
   and 26 classes, one core, Z B took 40-42 ms against OpenBLAS's 43-45 and
   Z'R 33-35 against 43-44 (4 classes: 15-16 against 20-21, and 12-14
   against 21). BLIS and MKL were not measured and keep their own. */
int rff_blas_own_rows(int n)
{
    return rff_blas_own() || (own_wanted && own_available && blas_kind == RFF_BLAS_OPENBLAS &&
                              rff_gemm_narrow(n));
}

/* Whether this processor and build run rff's own kernel at all. */
int rff_blas_own_available(void) { return own_available; }

/* Switches rff's own kernel on (1) or off (0). */
void rff_blas_set_own(int on)
{
    own_wanted = on != 0;
}

/* c = op(a) op(b) + beta c on the calling thread: rff's own kernel when
   it is in use, else one BLAS call (at whatever threads the BLAS has). May
   run inside rff's parallel regions only with a BLAS held at one thread. */
void rff_dgemm_seq(const char *ta, const char *tb, int m, int n, int k,
                   const double *a, int lda, const double *b, int ldb,
                   double beta, double *c, int ldc)
{
    const double one = 1.0;
    if (rff_blas_own() && rff_gemm(ta[0] == 'T', tb[0] == 'T', m, n, k, a, lda, b, ldb,
                                   beta, c, ldc, -1) == 0)
        return;
    F77_CALL(dgemm)(ta, tb, &m, &n, &k, &one, a, &lda, b, &ldb, &beta, c, &ldc
                    FCONE FCONE);
}

/* How a large product is split (see rff_dsyrk_threads()). OpenBLAS and
   BLIS share out the output among their threads and never the inner sums,
   so each entry is summed in the same order for any thread count: they get
   the whole product from one thread and `threads` threads of their own.
   The reference BLAS has no threads, and MKL's rounding may change with its
   thread count: rff's threads share fixed column blocks of the output, the
   BLAS on one thread. */
int rff_blas_split(void)
{
    return blas_kind == RFF_BLAS_OPENBLAS || blas_kind == RFF_BLAS_BLIS ?
        RFF_SPLIT_BLAS : RFF_SPLIT_BLOCKS;
}

/* The BLAS's threads now (1 for a BLAS without threads). */
int rff_blas_get_threads(void)
{
    int n = 1;
    switch (blas_kind) {
    case RFF_BLAS_OPENBLAS: n = openblas_get(); break;
    case RFF_BLAS_BLIS: n = (int) blis_get(); break;
    case RFF_BLAS_MKL: n = mkl_get(); break;
    case RFF_BLAS_FLEXIBLAS: n = flexi_get(); break;
    default: break;
    }
    return n < 1 ? 1 : n;
}

/* Sets the BLAS's threads, returning the previous number; does nothing
   (and returns 1) for a BLAS without threads. */
int rff_blas_set_threads(int n)
{
    int prev = rff_blas_get_threads();
    if (n < 1) n = 1;
    if (n == prev) return prev;
    switch (blas_kind) {
    case RFF_BLAS_OPENBLAS: openblas_set(n); break;
    case RFF_BLAS_BLIS: blis_set((int64_t) n); break;
    case RFF_BLAS_MKL: mkl_set(n); break;
    case RFF_BLAS_FLEXIBLAS: flexi_set(n); break;
    default: break;
    }
    return prev;
}

/* One BLAS call held at one BLAS thread, the previous count restored after
   it: for products too small to share (a few columns). */
void rff_dgemm1(const char *ta, const char *tb, int m, int n, int k,
                const double *a, int lda, const double *b, int ldb,
                double beta, double *c, int ldc)
{
    int prev = rff_blas_set_threads(1);
    rff_dgemm_seq(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
    rff_blas_set_threads(prev);
}

/* The upper triangle of c (n x n, leading dimension ldc) = beta c + a'a
   (trans "T": a is k x n) or + aa' (trans "N": a is n x k), on `threads`
   cores. Under RFF_SPLIT_BLAS one dsyrk with the BLAS at `threads` threads;
   under RFF_SPLIT_BLOCKS the columns of c in fixed blocks, each a dsyrk on
   its diagonal block and a dgemm above it, shared among rff's threads with
   the BLAS at one thread. Two levels of threads at once would oversubscribe
   the cores (three times slower with OpenBLAS on two cores). Must be called
   outside rff's parallel regions. */
void rff_dsyrk_threads(const char *trans, int n, int k, const double *a,
                       int lda, double beta, double *c, int ldc, int threads)
{
    const double one = 1.0;
    const int tr = trans[0] == 'T';
    if (rff_blas_split() == RFF_SPLIT_BLAS) {
        int prev = rff_blas_set_threads(threads);
        F77_CALL(dsyrk)("U", trans, &n, &k, &one, a, &lda, &beta, c, &ldc
                        FCONE FCONE);
        rff_blas_set_threads(prev);
        return;
    }
    const int nb = (n + RFF_SPLIT_COLS - 1) / RFF_SPLIT_COLS;
    const int own = rff_blas_own();
    /* op(a) packed once for all blocks (each reads its first c0 + w rows) */
    double *packed = own && nb > 1 ? rff_gemm_pack(tr, n, k, a, lda, threads) : NULL;
    int prev = rff_blas_set_threads(1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
    for (int t = 0; t < nb; t++) {
        int b = nb - 1 - t;  /* widest dgemm first */
        int c0 = b * RFF_SPLIT_COLS;
        int w = n - c0 < RFF_SPLIT_COLS ? n - c0 : RFF_SPLIT_COLS;
        const double *ab = a + (tr ? (R_xlen_t) c0 * lda : c0);
        double *cb = c + (R_xlen_t) c0 * ldc;
        /* rff's kernel: rows 0..c0 + w of the block's columns at once */
        if (packed && rff_gemm_packed(!tr, c0 + w, w, k, packed, n, ab, lda, beta, cb, ldc,
                                      c0) == 0)
            continue;
        if (own && rff_gemm(tr, !tr, c0 + w, w, k, a, lda, ab, lda, beta, cb, ldc,
                            c0) == 0)
            continue;
        F77_CALL(dsyrk)("U", trans, &w, &k, &one, ab, &lda, &beta, cb + c0,
                        &ldc FCONE FCONE);
        if (c0 > 0)
            F77_CALL(dgemm)(tr ? "T" : "N", tr ? "N" : "T", &c0, &w, &k, &one,
                            a, &lda, ab, &lda, &beta, cb, &ldc FCONE FCONE);
    }
    rff_blas_set_threads(prev);
    free(packed);
}

/* The lower triangle of c (n x n) set from its upper triangle. */
void rff_mirror_upper(double *c, int n, int ldc)
{
    for (int j = 1; j < n; j++)
        for (int i = 0; i < j; i++)
            c[j + (R_xlen_t) i * ldc] = c[i + (R_xlen_t) j * ldc];
}

/* c (m x n) = beta c + op(a) op(b), on `threads` cores, in fixed blocks of
   RFF_SPLIT_COLS columns of c (or rows, `by_rows`) shared among rff's
   threads, the BLAS on one thread, under every BLAS. Each entry is summed
   over all k terms by one call, so results do not depend on `threads`.
   (OpenBLAS's dgemm, unlike its dsyrk, rounds some products differently
   on one thread and on two: a 40 x 45 product of 150 terms did.) Must be
   called outside rff's parallel regions. */
static void dgemm_blocks(const char *ta, const char *tb, int m, int n, int k,
                         const double *a, int lda, const double *b, int ldb,
                         double beta, double *c, int ldc, int threads, int by_rows)
{
    const double one = 1.0;
    const int len = by_rows ? m : n;   /* the dimension of c split into blocks */
    const int nb = (len + RFF_SPLIT_COLS - 1) / RFF_SPLIT_COLS;
    const int atr = ta[0] == 'T', btr = tb[0] == 'T';
    const int own = by_rows ? rff_blas_own_rows(n) : rff_blas_own();
    /* one thread for one block, and for row blocks of a small product (a
       pass of a GLM on a few hundred rows runs hundreds of them: a team
       started for each costs more than it saves, and its idle threads spin
       on a core another process may need) */
    if (nb < 2 || (by_rows && (double) m * n * k < RFF_ROWS_MIN_WORK)) threads = 1;
    /* a'b by rows of c (a GLM pass's Z'R): b' packed once for all blocks */
    double *packed = own && by_rows && atr && !btr && nb > 1 ?
        rff_gemm_cols_pack(n, k, b, ldb, threads) : NULL;
    /* by columns of c: op(a) packed once for all blocks */
    double *packed_a = own && !by_rows && nb > 1 ? rff_gemm_pack(atr, m, k, a, lda, threads) : NULL;
    int prev = rff_blas_set_threads(1);
    /* dynamic: a thread on a core busy with another process takes fewer
       blocks (each block is the same product whichever thread runs it) */
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
    for (int t = 0; t < nb; t++) {
        int c0 = t * RFF_SPLIT_COLS;
        int w = len - c0 < RFF_SPLIT_COLS ? len - c0 : RFF_SPLIT_COLS;
        int mb = by_rows ? w : m, nw = by_rows ? n : w;
        const double *ab = by_rows ? a + (atr ? (R_xlen_t) c0 * lda : c0) : a;
        const double *bb = by_rows ? b : b + (btr ? c0 : (R_xlen_t) c0 * ldb);
        double *cb = by_rows ? c + c0 : c + (R_xlen_t) c0 * ldc;
        if (packed) {
            rff_gemm_cols(mb, nw, k, ab, lda, packed, beta, cb, ldc);
            continue;
        }
        if (packed_a && rff_gemm_packed(btr, mb, nw, k, packed_a, m, bb, ldb, beta, cb, ldc,
                                        -1) == 0)
            continue;
        if (own && rff_gemm(atr, btr, mb, nw, k, ab, lda, bb, ldb, beta, cb, ldc, -1) == 0)
            continue;
        F77_CALL(dgemm)(ta, tb, &mb, &nw, &k, &one, ab, &lda, bb, &ldb, &beta,
                        cb, &ldc FCONE FCONE);
    }
    rff_blas_set_threads(prev);
    free(packed);
    free(packed_a);
}

/* ... in column blocks: products with many columns. */
void rff_dgemm_threads(const char *ta, const char *tb, int m, int n, int k,
                       const double *a, int lda, const double *b, int ldb,
                       double beta, double *c, int ldc, int threads)
{
    dgemm_blocks(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, threads, 0);
}

/* ... in row blocks: products with few columns (a GLM pass's n x K linear
   predictors and its D x K gradient). */
void rff_dgemm_rows(const char *ta, const char *tb, int m, int n, int k,
                    const double *a, int lda, const double *b, int ldb,
                    double beta, double *c, int ldc, int threads)
{
    dgemm_blocks(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, threads, 1);
}
