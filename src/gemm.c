/* rff's own matrix product, for the BLAS most R installations run on. R's
   reference BLAS computes a'a and a'b one scalar product at a time, at
   about 3 GF/s per core on a current x86-64 machine; the products that
   dominate a fit (Z'Z of the features, Z B and Z'R of a GLM pass) run here
   at about 40 GF/s per core where the processor has AVX2 and FMA, in the
   layout every optimized BLAS uses (Goto and van de Geijn 2008): blocks of
   op(a) and op(b) copied into contiguous panels, and an 8 x 6 block of c
   kept in registers while a panel of KC inner terms streams past it.
   Products with few columns of c (at most GEMM_NARROW: a GLM pass's Z B
   and Z'R, with one column per class) leave a where it lies: packing it
   cost as much as the product. Z B reads 8 rows of each column of Z in
   turn (micro_rows()); Z'R is computed as its transpose R'Z, R packed, 6
   columns of Z streaming down their rows (micro_cols()). On 16,000 x 1,224
   features and 26 classes this took the two products from 37 and 30 ms to
   18 and 20 ms on two cores. Where the processor has AVX-512F, the
   register blocks run on 512-bit registers (gemm512.c), two blocks of 8
   rows at a time, with the same sums: on a 2-core AMD EPYC (Zen 5) that
   took a 2,000 x 2,000 product from 58 to 98 GF/s on two cores, Z B (26
   classes) from 58 to 81 and Z'R from 55 to 81.

   Each entry of c is summed in a fixed order (blocks of KC terms in turn,
   each term by one FMA in the order of the terms, on every route), so a
   result depends neither on the thread that computes it, nor on how the
   columns of c are shared, nor on how many there are. Only malloc and free are called, so the
   routine may run inside OpenMP regions; it returns -1, having changed
   nothing, when its panels cannot be allocated (the caller then uses the
   BLAS). Bottom layer. */
#include "rff.h"
#include <stdlib.h>

#include "gemm.h"

/* Whether this processor runs the kernel (AVX2 and FMA): asked once, on
   the main thread when the package is loaded (rff_blas_detect()), and kept
   for rff_gemm(), which refuses to run before. */
static int gemm_ok = 0;
/* Whether the register blocks run on 512-bit registers (gemm512.c): where
   the processor has AVX-512F, unless switched off (rff_gemm_set_wide()). */
static int gemm_wide = 0, gemm_wide_ok = 0;

int rff_gemm_available(void)
{
#ifdef RFF_GEMM_AVX2
    __builtin_cpu_init();
    gemm_ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    gemm_ok = 0;
#endif
#ifdef RFF_GEMM_AVX512
    gemm_wide_ok = gemm_ok && rff_gemm512_supported();
#endif
    gemm_wide = gemm_wide_ok;
    return gemm_ok;
}

/* Switches the 512-bit kernels on (1, where the processor runs them) or
   off (0); -1 leaves them. Returns whether they are on. Not while a
   product runs: from the main thread, between calls (the tests compare
   the two kernels). */
int rff_gemm_set_wide(int on)
{
    if (on >= 0) gemm_wide = on && gemm_wide_ok;
    return gemm_wide;
}

/* Whether rff_gemm_available() found the kernel's instructions (for the
   matrix-vector kernels of matvec.c). */
int rff_gemm_ready(void) { return gemm_ok; }

/* Whether a product with n columns of c (not a triangle) takes the narrow
   route: a (or a') read where it lies, but for the last m % 8 rows of a b
   (micro_rows(), micro_cols()). */
int rff_gemm_narrow(int n) { return n <= GEMM_NARROW; }

#ifdef RFF_GEMM_AVX2

/* The register block of the kernels below: 8 x 6 entries of c in twelve
   registers (c<column><half>); a step adds the 8 entries at `a` times each
   of the 6 numbers at b0..b5, one FMA per entry; the block is stored to t
   column by column. */
#define GEMM_BLOCK_ZERO                                                        \
    __m256d c00 = _mm256_setzero_pd(), c01 = _mm256_setzero_pd();              \
    __m256d c10 = _mm256_setzero_pd(), c11 = _mm256_setzero_pd();              \
    __m256d c20 = _mm256_setzero_pd(), c21 = _mm256_setzero_pd();              \
    __m256d c30 = _mm256_setzero_pd(), c31 = _mm256_setzero_pd();              \
    __m256d c40 = _mm256_setzero_pd(), c41 = _mm256_setzero_pd();              \
    __m256d c50 = _mm256_setzero_pd(), c51 = _mm256_setzero_pd()
#define GEMM_BLOCK_COL(c0, c1, bp)                                             \
    do {                                                                       \
        const __m256d b_ = _mm256_broadcast_sd(bp);                            \
        c0 = _mm256_fmadd_pd(a0_, b_, c0);                                     \
        c1 = _mm256_fmadd_pd(a1_, b_, c1);                                     \
    } while (0)
#define GEMM_BLOCK_STEP(a, b0, b1, b2, b3, b4, b5)                             \
    do {                                                                       \
        const __m256d a0_ = _mm256_loadu_pd(a), a1_ = _mm256_loadu_pd((a) + 4); \
        GEMM_BLOCK_COL(c00, c01, b0);                                          \
        GEMM_BLOCK_COL(c10, c11, b1);                                          \
        GEMM_BLOCK_COL(c20, c21, b2);                                          \
        GEMM_BLOCK_COL(c30, c31, b3);                                          \
        GEMM_BLOCK_COL(c40, c41, b4);                                          \
        GEMM_BLOCK_COL(c50, c51, b5);                                          \
    } while (0)
#define GEMM_BLOCK_STORE(t)                                                    \
    do {                                                                       \
        _mm256_storeu_pd(t, c00); _mm256_storeu_pd((t) + 4, c01);              \
        _mm256_storeu_pd((t) + 8, c10); _mm256_storeu_pd((t) + 12, c11);       \
        _mm256_storeu_pd((t) + 16, c20); _mm256_storeu_pd((t) + 20, c21);      \
        _mm256_storeu_pd((t) + 24, c30); _mm256_storeu_pd((t) + 28, c31);      \
        _mm256_storeu_pd((t) + 32, c40); _mm256_storeu_pd((t) + 36, c41);      \
        _mm256_storeu_pd((t) + 40, c50); _mm256_storeu_pd((t) + 44, c51);      \
    } while (0)

/* Rows i0..i0+mc of op(a), inner terms p0..p0+kc, into panels of GEMM_MR
   rows: element (i0 + b GEMM_MR + ii, p0 + r) at out[(b kc + r) GEMM_MR +
   ii], rows past mc zero. op(a) = a' when ta (a is k x m), else a. */
static void pack_a(int ta, const double *a, int lda, int i0, int mc, int p0,
                   int kc, double *out)
{
    for (int b = 0; b * GEMM_MR < mc; b++) {
        const int mi = mc - b * GEMM_MR < GEMM_MR ? mc - b * GEMM_MR : GEMM_MR;
        double *o = out + (size_t) b * kc * GEMM_MR;
        const int ib = i0 + b * GEMM_MR;
        if (ta) {
            for (int ii = 0; ii < mi; ii++) {
                const double *col = a + (size_t) (ib + ii) * lda + p0;
                for (int r = 0; r < kc; r++) o[(size_t) r * GEMM_MR + ii] = col[r];
            }
        } else {
            for (int r = 0; r < kc; r++) {
                const double *row = a + ib + (size_t) (p0 + r) * lda;
                for (int ii = 0; ii < mi; ii++) o[(size_t) r * GEMM_MR + ii] = row[ii];
            }
        }
        for (int ii = mi; ii < GEMM_MR; ii++)
            for (int r = 0; r < kc; r++) o[(size_t) r * GEMM_MR + ii] = 0.0;
    }
}

/* Columns 0..n of op(b), inner terms p0..p0+kc, into panels of GEMM_NR
   columns: element (p0 + r, b GEMM_NR + jj) at out[(b kc + r) GEMM_NR +
   jj]. op(b) = b' when tb (b is n x k), else b. */
static void pack_b(int tb, const double *b, int ldb, int n, int p0, int kc,
                   double *out)
{
    for (int q = 0; q * GEMM_NR < n; q++) {
        const int nj = n - q * GEMM_NR < GEMM_NR ? n - q * GEMM_NR : GEMM_NR;
        double *o = out + (size_t) q * kc * GEMM_NR;
        const int jb = q * GEMM_NR;
        if (tb) {
            for (int r = 0; r < kc; r++) {
                const double *row = b + jb + (size_t) (p0 + r) * ldb;
                for (int jj = 0; jj < nj; jj++) o[(size_t) r * GEMM_NR + jj] = row[jj];
            }
        } else {
            for (int jj = 0; jj < nj; jj++) {
                const double *col = b + (size_t) (jb + jj) * ldb + p0;
                for (int r = 0; r < kc; r++) o[(size_t) r * GEMM_NR + jj] = col[r];
            }
        }
        for (int jj = nj; jj < GEMM_NR; jj++)
            for (int r = 0; r < kc; r++) o[(size_t) r * GEMM_NR + jj] = 0.0;
    }
}

/* The 8 x 6 block of c at `c` += pa' pb over kc terms, adding entry (ii,
   jj) only when ii < mi, jj < nj and ii <= jj + d (d: how far below the
   block's first column c's kept triangle reaches). */
__attribute__((target("avx2,fma")))
static void micro(int kc, const double *pa, const double *pb, double *c,
                  int ldc, int mi, int nj, int d)
{
    GEMM_BLOCK_ZERO;
    for (int r = 0; r < kc; r++, pa += GEMM_MR, pb += GEMM_NR) {
        GEMM_BLOCK_STEP(pa, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
    }
    double t[GEMM_NR * GEMM_MR];
    GEMM_BLOCK_STORE(t);
    for (int jj = 0; jj < nj; jj++) {
        const int top = jj + d + 1 < mi ? jj + d + 1 : mi;
        double *cj = c + (size_t) jj * ldc;
        for (int ii = 0; ii < top; ii++) cj[ii] += t[jj * GEMM_MR + ii];
    }
}

/* The same block as micro(), full (mi = 8, no triangle), with op(a) = a
   read where it lies: column-major, its 8 rows at `a`, one column per
   term (stride lda), the line two blocks further down each column fetched
   ahead (the blocks walk down the rows). For products with few columns,
   where packing a would cost as much as the product (a GLM pass's Z B). */
__attribute__((target("avx2,fma")))
static void micro_rows(int kc, const double *a, int lda, const double *pb, double *c,
                       int ldc, int nj)
{
    GEMM_BLOCK_ZERO;
    for (int r = 0; r < kc; r++, a += lda, pb += GEMM_NR) {
        _mm_prefetch((const char *) (a + 2 * GEMM_MR), _MM_HINT_T0);
        GEMM_BLOCK_STEP(a, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
    }
    double t[GEMM_NR * GEMM_MR];
    GEMM_BLOCK_STORE(t);
    for (int jj = 0; jj < nj; jj++) {
        double *cj = c + (size_t) jj * ldc;
        for (int ii = 0; ii < GEMM_MR; ii++) cj[ii] += t[jj * GEMM_MR + ii];
    }
}

/* The block of c' = b'a for c = a'b with few columns (a GLM pass's Z'R):
   c(j + jj, i + ii) += sum_r b(r, i + ii) a(r, j + jj) for ii < ni (b'
   packed as op(a) is, 8 columns per panel: pb) and jj < mj (a read where
   it lies: column j + jj from `a`, one row per term). The 6 columns of a
   stream down their rows, and a is never copied. Each entry is summed
   over r in the order micro() sums it. */
__attribute__((target("avx2,fma")))
static void micro_cols(int kc, const double *pb, const double *a, int lda, double *c,
                       int ldc, int ni, int mj)
{
    GEMM_BLOCK_ZERO;
    const double *z[GEMM_NR];
    gemm_cols_streams(a, lda, mj, z);
    for (int r = 0; r < kc; r++, pb += GEMM_MR) {
        GEMM_BLOCK_STEP(pb, z[0] + r, z[1] + r, z[2] + r, z[3] + r, z[4] + r, z[5] + r);
    }
    double t[GEMM_NR * GEMM_MR];
    GEMM_BLOCK_STORE(t);
    for (int ii = 0; ii < ni; ii++) {
        double *ci = c + (size_t) ii * ldc;
        for (int jj = 0; jj < mj; jj++) ci[jj] += t[jj * GEMM_MR + ii];
    }
}

/* micro_cols() for a last panel of at most 4 columns of b (ni <= 4: of 26
   classes, the last panel of 8 holds 2): the panel's first 4 entries of
   each term only, in 6 registers, at half the multiply-adds of a full
   panel. Each entry is summed as micro_cols() sums it. */
__attribute__((target("avx2,fma")))
static void micro_cols4(int kc, const double *pb, const double *a, int lda, double *c,
                        int ldc, int ni, int mj)
{
    __m256d c0 = _mm256_setzero_pd(), c1 = _mm256_setzero_pd(), c2 = _mm256_setzero_pd();
    __m256d c3 = _mm256_setzero_pd(), c4 = _mm256_setzero_pd(), c5 = _mm256_setzero_pd();
    const double *z[GEMM_NR];
    gemm_cols_streams(a, lda, mj, z);
    for (int r = 0; r < kc; r++, pb += GEMM_MR) {
        const __m256d a0_ = _mm256_loadu_pd(pb);
        c0 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[0] + r), c0);
        c1 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[1] + r), c1);
        c2 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[2] + r), c2);
        c3 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[3] + r), c3);
        c4 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[4] + r), c4);
        c5 = _mm256_fmadd_pd(a0_, _mm256_broadcast_sd(z[5] + r), c5);
    }
    double t[GEMM_NR * 4];
    _mm256_storeu_pd(t, c0); _mm256_storeu_pd(t + 4, c1); _mm256_storeu_pd(t + 8, c2);
    _mm256_storeu_pd(t + 12, c3); _mm256_storeu_pd(t + 16, c4); _mm256_storeu_pd(t + 20, c5);
    for (int ii = 0; ii < ni; ii++) {
        double *ci = c + (size_t) ii * ldc;
        for (int jj = 0; jj < mj; jj++) ci[jj] += t[jj * 4 + ii];
    }
}

/* c = a'b (m x n, n <= GEMM_NARROW) by micro_cols(): b' packed, a never;
   into `pb` one panel of KC terms at a time, or all of it packed before
   (`packed`, from rff_gemm_cols_pack(); pb unused). */
static void gemm_cols(int m, int n, int k, const double *a, int lda, const double *b,
                      int ldb, double *c, int ldc, double *pb, const double *packed)
{
    const int np = (n + GEMM_MR - 1) / GEMM_MR;
    for (int p0 = 0; p0 < k; p0 += GEMM_KC) {
        const int kc = k - p0 > GEMM_KC ? GEMM_KC : k - p0;
        const double *pk = packed ? packed + (size_t) p0 * GEMM_MR * np : pb;
        if (!packed) pack_a(1, b, ldb, 0, n, p0, kc, pb);
        for (int j = 0; j < m; j += GEMM_NR) {
            const int mj = m - j < GEMM_NR ? m - j : GEMM_NR;
            for (int q = 0; q < np;) {
                const int ni = n - q * GEMM_MR < GEMM_MR ? n - q * GEMM_MR : GEMM_MR;
                const double *pq = pk + (size_t) q * kc * GEMM_MR, *aj = a + (size_t) j * lda + p0;
                double *cq = c + j + (size_t) q * GEMM_MR * ldc;
#ifdef RFF_GEMM_AVX512
                if (gemm_wide) {
                    /* two panels of b' side by side where there are, the
                       last one part full (zero past n) */
                    const int nb = np - q >= 2 ? 2 : 1;
                    const int last = n - (q + nb - 1) * GEMM_MR;
                    rff_micro_cols512(nb, kc, pq, aj, lda, cq, ldc, mj,
                                      last < GEMM_MR ? last : GEMM_MR);
                    q += nb;
                    continue;
                }
#endif
                (ni <= 4 ? micro_cols4 : micro_cols)(kc, pq, aj, lda, cq, ldc, ni, mj);
                q++;
            }
        }
    }
}

/* rff_gemm(); op(a)'s panels from `pa_all` (rows rounded up to m8). */
static int gemm_run(int ta, int tb, int m, int n, int k, const double *a, int lda,
                    const double *b, int ldb, double beta, double *c, int ldc, int tri,
                    const double *pa_all, int m8)
{
    if (m <= 0 || n <= 0) return 0;
    const int full = tri < 0;
    const int kc0 = k < GEMM_KC ? (k > 0 ? k : 1) : GEMM_KC;
    const int nq = (n + GEMM_NR - 1) / GEMM_NR;
    /* few columns of c: a is read where it lies, by rows of a (ta = 0, all
       but the last m % 8 rows) or, for a'b, by columns of a (c' = b'a) */
    const int narrow = full && rff_gemm_narrow(n) && !pa_all;
    const int by_cols = narrow && ta && !tb;
    const int direct = narrow && !ta ? m - m % GEMM_MR : 0;  /* rows read in place */
    const int need_pa = !by_cols && direct < m && !pa_all;   /* a's panel, for the other rows */
    /* malloc, not R_alloc: this runs inside rff's OpenMP regions. Nothing
       between here and the frees below can fail or jump. */
    double *pb = malloc(sizeof(double) * (size_t) kc0 *
                        (by_cols ? (size_t) GEMM_MR * ((n + GEMM_MR - 1) / GEMM_MR)
                                 : (size_t) GEMM_NR * nq));
    double *pa = need_pa ? malloc(sizeof(double) * (size_t) kc0 * GEMM_MC) : NULL;
    if ((need_pa && !pa) || !pb) {
        free(pa);
        free(pb);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        const int top = full || j + tri + 1 > m ? m : j + tri + 1;
        double *cj = c + (size_t) j * ldc;
        if (beta == 0.0) for (int i = 0; i < top; i++) cj[i] = 0.0;
        else if (beta != 1.0) for (int i = 0; i < top; i++) cj[i] *= beta;
    }
    if (by_cols) {
        gemm_cols(m, n, k, a, lda, b, ldb, c, ldc, pb, NULL);
        free(pa);
        free(pb);
        return 0;
    }
    for (int p0 = 0; p0 < k; p0 += GEMM_KC) {
        const int kc = k - p0 < GEMM_KC ? k - p0 : GEMM_KC;
        pack_b(tb, b, ldb, n, p0, kc, pb);
        for (int i = 0; i < direct;) {
            /* on 512-bit registers, two blocks of 8 rows where there are */
            const int nb = gemm_wide ? (direct - i >= 2 * GEMM_MR ? 2 : 1) : 0;
            for (int q = 0; q < nq; q++) {
                const int j0 = q * GEMM_NR, nj = n - j0 < GEMM_NR ? n - j0 : GEMM_NR;
                const double *ai = a + i + (size_t) p0 * lda, *pq = pb + (size_t) q * kc * GEMM_NR;
                double *ci = c + (size_t) j0 * ldc + i;
#ifdef RFF_GEMM_AVX512
                if (nb) {
                    rff_micro_rows512(nb, kc, ai, lda, pq, ci, ldc, nj);
                    continue;
                }
#endif
                micro_rows(kc, ai, lda, pq, ci, ldc, nj);
            }
            i += (nb ? nb : 1) * GEMM_MR;
        }
        for (int i0 = direct; i0 < m; i0 += GEMM_MC) {
            if (!full && i0 > n - 1 + tri) break;
            const int mc = m - i0 < GEMM_MC ? m - i0 : GEMM_MC;
            const double *pp = pa_all ? pa_all + (size_t) p0 * m8 + (size_t) i0 * kc : pa;
            if (!pa_all) pack_a(ta, a, lda, i0, mc, p0, kc, pa);
            for (int q = 0; q < nq; q++) {
                const int j0 = q * GEMM_NR;
                const int nj = n - j0 < GEMM_NR ? n - j0 : GEMM_NR;
                for (int i = i0; i < i0 + mc;) {
                    if (!full && i > j0 + nj - 1 + tri) break;
                    const int mi = i0 + mc - i < GEMM_MR ? i0 + mc - i : GEMM_MR;
                    const double *pi = pp + (size_t) (i - i0) * kc, *pq = pb + (size_t) q * kc * GEMM_NR;
                    double *ci = c + (size_t) j0 * ldc + i;
#ifdef RFF_GEMM_AVX512
                    /* full blocks of 8 rows (inside the kept triangle), two
                       side by side where there are */
                    if (gemm_wide && mi == GEMM_MR && (full || j0 + tri - i >= GEMM_MR - 1)) {
                        const int nb = i0 + mc - i >= 2 * GEMM_MR &&
                            (full || j0 + tri - i >= 2 * GEMM_MR - 1) ? 2 : 1;
                        rff_micro512(nb, kc, pi, pq, ci, ldc, nj);
                        i += nb * GEMM_MR;
                        continue;
                    }
#endif
                    micro(kc, pi, pq, ci, ldc, mi, nj, full ? GEMM_MR : j0 + tri - i);
                    i += GEMM_MR;
                }
            }
        }
    }
    free(pa);
    free(pb);
    return 0;
}

#endif /* RFF_GEMM_AVX2 */

/* c (m x n, leading dimension ldc) = beta c + op(a) op(b), op(a) m x k
   (a' when ta), op(b) k x n (b' when tb); with tri >= 0 only the entries
   (i, j) with i <= j + tri (for a'a, the upper triangle: tri = 0). Entries
   outside are not touched. Returns 0, or -1 (nothing changed) when the
   processor lacks the kernel or its panels cannot be allocated. */
int rff_gemm(int ta, int tb, int m, int n, int k, const double *a, int lda,
             const double *b, int ldb, double beta, double *c, int ldc, int tri)
{
#ifdef RFF_GEMM_AVX2
    if (!gemm_ok) return -1;
    return gemm_run(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc, tri, NULL, 0);
#else
    (void) ta; (void) tb; (void) m; (void) n; (void) k; (void) a; (void) lda;
    (void) b; (void) ldb; (void) beta; (void) c; (void) ldc; (void) tri;
    return -1;
#endif
}

/* All rows of op(a) (m x k; a' when ta) packed once for the products of
   several blocks of columns of op(b) (rff_gemm_packed()), each of which
   packed all of op(a) again: panels of KC terms, each of all rows (rounded
   up to 8, those past m zero), a panel at a time on `threads` cores (a
   copy: the same panels for any number; on one core the search's packing
   made half a second of LetterRecognition's fit serial). NULL when the
   kernel cannot run or the panels would take more than 64 MB; the caller
   frees them. Must be called outside OpenMP regions when threads > 1. */
double *rff_gemm_pack(int ta, int m, int k, const double *a, int lda, int threads)
{
#ifdef RFF_GEMM_AVX2
    if (!gemm_ok || m <= 0 || k <= 0) return NULL;
    const size_t m8 = ((size_t) m + GEMM_MR - 1) / GEMM_MR * GEMM_MR;
    if (m8 * (size_t) k > (size_t) 8 << 20) return NULL;
    double *out = malloc(sizeof(double) * m8 * (size_t) k);
    if (!out) return NULL;
    const int np = (k + GEMM_KC - 1) / GEMM_KC;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && np > 1)
#endif
    for (int q = 0; q < np; q++) {
        const int p0 = q * GEMM_KC;
        pack_a(ta, a, lda, 0, m, p0, k - p0 < GEMM_KC ? k - p0 : GEMM_KC, out + (size_t) p0 * m8);
    }
    return out;
#else
    (void) ta; (void) m; (void) k; (void) a; (void) lda; (void) threads;
    return NULL;
#endif
}

/* rff_gemm() with the first m rows of op(a) from `packed`, all mp rows of
   op(a) packed by rff_gemm_pack(ta, mp, k, ...) (m <= mp): the same sums
   in the same order, so the same result. May run inside OpenMP regions. */
int rff_gemm_packed(int tb, int m, int n, int k, const double *packed, int mp,
                    const double *b, int ldb, double beta, double *c, int ldc, int tri)
{
#ifdef RFF_GEMM_AVX2
    if (!gemm_ok) return -1;
    return gemm_run(0, tb, m, n, k, NULL, 0, b, ldb, beta, c, ldc, tri, packed,
                    (mp + GEMM_MR - 1) / GEMM_MR * GEMM_MR);
#else
    (void) tb; (void) m; (void) n; (void) k; (void) packed; (void) mp; (void) b;
    (void) ldb; (void) beta; (void) c; (void) ldc; (void) tri;
    return -1;
#endif
}

/* The products a'b of several blocks of columns of a with the same b (k x
   n): rff_gemm()'s route for few columns of c (n <= GEMM_NARROW), with b'
   packed once for all of them (rff_gemm_cols_pack()) instead of once for
   each (a GLM pass's Z'R, in blocks of 128 features on rff's threads:
   packing the residuals for every block took about a seventh of the
   product's time on 16,000 rows and 26 classes). The same sums in the same order as
   rff_gemm(). rff_gemm_cols_pack() returns NULL (the caller then uses
   rff_gemm()) when the kernel cannot run, n is too wide, or the panels
   would take more than 64 MB; the caller frees the panels. */
double *rff_gemm_cols_pack(int n, int k, const double *b, int ldb, int threads)
{
    /* b' (n x k) in op(a)'s panels: 8 columns of b a panel, as gemm_cols()
       reads them */
    return rff_gemm_narrow(n) ? rff_gemm_pack(1, n, k, b, ldb, threads) : NULL;
}

/* c (m x n) = beta c + a'b, b' packed by rff_gemm_cols_pack(n, k, b, ...).
   Calls only what rff_gemm() does, so it may run inside OpenMP regions. */
void rff_gemm_cols(int m, int n, int k, const double *a, int lda, const double *packed,
                   double beta, double *c, int ldc)
{
#ifdef RFF_GEMM_AVX2
    for (int j = 0; j < n; j++) {
        double *cj = c + (size_t) j * ldc;
        if (beta == 0.0) for (int i = 0; i < m; i++) cj[i] = 0.0;
        else if (beta != 1.0) for (int i = 0; i < m; i++) cj[i] *= beta;
    }
    if (m > 0) gemm_cols(m, n, k, a, lda, NULL, 0, c, ldc, NULL, packed);
#else
    (void) m; (void) n; (void) k; (void) a; (void) lda; (void) packed; (void) beta;
    (void) c; (void) ldc;
#endif
}
