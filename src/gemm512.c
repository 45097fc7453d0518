/* The register kernels of rff's own product (gemm.c) on 512-bit registers,
   for processors with AVX-512F: the same 8 x 6 block of c, its 8 rows in
   one register per column instead of two, and two such blocks side by
   side, so that twelve sums are in flight as in the AVX2 kernels. Each
   entry of c is summed by one FMA per term, in the order of the terms, as
   the AVX2 kernels sum it, so the two give the same results to the last
   bit; gemm.c chooses these where the processor runs them. On a 2-core
   AMD EPYC (Zen 5), a block of 256 terms in the cache ran at 54 GF/s per
   core on AVX2, 82 here with one block and 107 with two. Calls nothing:
   runs inside OpenMP regions. Bottom layer. */
#include "gemm.h"

#ifdef RFF_GEMM_AVX512

int rff_gemm512_supported(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

/* One 8 x 6 block of c in six registers x0..x5 (a column each); a step
   adds the 8 entries in register a times each of the 6 numbers at b0..b5,
   one FMA per entry; the block is stored to t column by column. */
#define G512_ZERO(x) __m512d x##0 = _mm512_setzero_pd(), x##1 = x##0, x##2 = x##0, \
        x##3 = x##0, x##4 = x##0, x##5 = x##0
#define G512_FMA(x, a, b0, b1, b2, b3, b4, b5)                                 \
    do {                                                                       \
        x##0 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b0)), x##0);                \
        x##1 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b1)), x##1);                \
        x##2 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b2)), x##2);                \
        x##3 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b3)), x##3);                \
        x##4 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b4)), x##4);                \
        x##5 = _mm512_fmadd_pd(a, _mm512_set1_pd(*(b5)), x##5);                \
    } while (0)
#define G512_STORE(t, x)                                                       \
    do {                                                                       \
        _mm512_storeu_pd(t, x##0); _mm512_storeu_pd((t) + 8, x##1);            \
        _mm512_storeu_pd((t) + 16, x##2); _mm512_storeu_pd((t) + 24, x##3);    \
        _mm512_storeu_pd((t) + 32, x##4); _mm512_storeu_pd((t) + 40, x##5);    \
    } while (0)

/* Adds the nb blocks in t (8 x 6 each, column by column) to c: block q to
   rows 8q..8q+7 and columns jj < nj of c, or with `transposed` (c' = b'a,
   micro_cols) to rows jj < nj and columns 8q..8q+7; of the last block only
   its first `last` rows (columns) of 8. */
static void g512_add(const double *t, int nb, int last, double *c, int ldc, int nj,
                     int transposed)
{
    for (int q = 0; q < nb; q++) {
        const double *tq = t + q * GEMM_MR * GEMM_NR;
        const int mi = q == nb - 1 ? last : GEMM_MR;
        for (int jj = 0; jj < nj; jj++)
            for (int ii = 0; ii < mi; ii++) {
                const int i = q * GEMM_MR + ii;
                if (transposed) c[jj + (size_t) i * ldc] += tq[jj * GEMM_MR + ii];
                else c[i + (size_t) jj * ldc] += tq[jj * GEMM_MR + ii];
            }
    }
}

__attribute__((target("avx512f")))
void rff_micro512(int nb, int kc, const double *pa, const double *pb, double *c, int ldc,
                  int nj)
{
    double t[2 * GEMM_MR * GEMM_NR];
    G512_ZERO(x);
    if (nb == 2) {
        G512_ZERO(y);
        const double *pa2 = pa + (size_t) kc * GEMM_MR;
        for (int r = 0; r < kc; r++, pa += GEMM_MR, pa2 += GEMM_MR, pb += GEMM_NR) {
            const __m512d a = _mm512_loadu_pd(pa), a2 = _mm512_loadu_pd(pa2);
            G512_FMA(x, a, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
            G512_FMA(y, a2, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
        }
        G512_STORE(t + GEMM_MR * GEMM_NR, y);
    } else {
        for (int r = 0; r < kc; r++, pa += GEMM_MR, pb += GEMM_NR) {
            const __m512d a = _mm512_loadu_pd(pa);
            G512_FMA(x, a, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
        }
    }
    G512_STORE(t, x);
    g512_add(t, nb, GEMM_MR, c, ldc, nj, 0);
}

__attribute__((target("avx512f")))
void rff_micro_rows512(int nb, int kc, const double *a, int lda, const double *pb, double *c,
                       int ldc, int nj)
{
    double t[2 * GEMM_MR * GEMM_NR];
    G512_ZERO(x);
    if (nb == 2) {
        G512_ZERO(y);
        for (int r = 0; r < kc; r++, a += lda, pb += GEMM_NR) {
            _mm_prefetch((const char *) (a + 4 * GEMM_MR), _MM_HINT_T0);
            const __m512d a1 = _mm512_loadu_pd(a), a2 = _mm512_loadu_pd(a + GEMM_MR);
            G512_FMA(x, a1, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
            G512_FMA(y, a2, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
        }
        G512_STORE(t + GEMM_MR * GEMM_NR, y);
    } else {
        for (int r = 0; r < kc; r++, a += lda, pb += GEMM_NR) {
            _mm_prefetch((const char *) (a + 2 * GEMM_MR), _MM_HINT_T0);
            const __m512d a1 = _mm512_loadu_pd(a);
            G512_FMA(x, a1, pb, pb + 1, pb + 2, pb + 3, pb + 4, pb + 5);
        }
    }
    G512_STORE(t, x);
    g512_add(t, nb, GEMM_MR, c, ldc, nj, 0);
}

__attribute__((target("avx512f")))
void rff_micro_cols512(int nb, int kc, const double *pb, const double *a, int lda, double *c,
                       int ldc, int mj, int ni)
{
    double t[2 * GEMM_MR * GEMM_NR];
    const double *z[GEMM_NR];
    gemm_cols_streams(a, lda, mj, z);
    G512_ZERO(x);
    if (nb == 2) {
        G512_ZERO(y);
        const double *pb2 = pb + (size_t) kc * GEMM_MR;
        for (int r = 0; r < kc; r++, pb += GEMM_MR, pb2 += GEMM_MR) {
            const __m512d b1 = _mm512_loadu_pd(pb), b2 = _mm512_loadu_pd(pb2);
            G512_FMA(x, b1, z[0] + r, z[1] + r, z[2] + r, z[3] + r, z[4] + r, z[5] + r);
            G512_FMA(y, b2, z[0] + r, z[1] + r, z[2] + r, z[3] + r, z[4] + r, z[5] + r);
        }
        G512_STORE(t + GEMM_MR * GEMM_NR, y);
    } else {
        for (int r = 0; r < kc; r++, pb += GEMM_MR) {
            const __m512d b1 = _mm512_loadu_pd(pb);
            G512_FMA(x, b1, z[0] + r, z[1] + r, z[2] + r, z[3] + r, z[4] + r, z[5] + r);
        }
    }
    G512_STORE(t, x);
    g512_add(t, nb, ni, c, ldc, mj, 1);
}

#else
/* ISO C wants at least one declaration in a translation unit */
typedef int rff_gemm512_unused;
#endif
