/* Matrix-vector products of rff's eigenproblems, on one core with AVX2
   and FMA where rff_gemm_available() found them: the symmetric product
   of a tridiagonalization's step (rff_symv_lower()) and the products of
   its panels with their earlier columns (rff_gemv_sub(), rff_gemv_t(),
   the six dgemv calls of LAPACK's dlatrd). The reference BLAS sums each
   of these one term at a time, at about 1.3 GF/s (dgemv on 1,000 x 16):
   in a 1,000 x 1,000 eigenproblem the panels' dgemv took 83 ms of 340.
   Each returns -1, having changed nothing, where the processor lacks the
   instructions (the caller then uses the BLAS). Above gemm.c. */
#include "rff.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RFF_MATVEC_AVX2 1
#include <immintrin.h>
#endif

#ifdef RFF_MATVEC_AVX2

/* The sums of the four lanes of each of t0..t3, as (l0 + l1) + (l2 + l3). */
__attribute__((target("avx2,fma")))
static inline void lane_sums(__m256d t0, __m256d t1, __m256d t2, __m256d t3, double *u)
{
    double s[16];
    _mm256_storeu_pd(s, t0);
    _mm256_storeu_pd(s + 4, t1);
    _mm256_storeu_pd(s + 8, t2);
    _mm256_storeu_pd(s + 12, t3);
    for (int c = 0; c < 4; c++) u[c] = (s[4 * c] + s[4 * c + 1]) + (s[4 * c + 2] + s[4 * c + 3]);
}

/* y = A x for A (r x r) symmetric, its lower triangle at a (column-major,
   leading dimension lda): four columns at a time, each entry of A below
   their diagonal block read once for both of its uses (y_i += a_ij x_j and
   y_j += a_ij x_i), four rows per FMA. */
__attribute__((target("avx2,fma")))
static void symv_lower(int r, const double *a, int lda, const double *x, double *y)
{
    for (int i = 0; i < r; i++) y[i] = 0.0;
    int j = 0;
    for (; j + 4 <= r; j += 4) {
        const double *a0 = a + (size_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                     *a3 = a2 + lda;
        /* the 4 x 4 block on the diagonal */
        for (int c = 0; c < 4; c++) {
            const double *ac = a0 + (size_t) c * lda;
            y[j + c] += ac[j + c] * x[j + c];
            for (int q = c + 1; q < 4; q++) {
                y[j + q] += ac[j + q] * x[j + c];
                y[j + c] += ac[j + q] * x[j + q];
            }
        }
        const __m256d x0 = _mm256_broadcast_sd(x + j), x1 = _mm256_broadcast_sd(x + j + 1),
                      x2 = _mm256_broadcast_sd(x + j + 2), x3 = _mm256_broadcast_sd(x + j + 3);
        __m256d t0 = _mm256_setzero_pd(), t1 = _mm256_setzero_pd(),
                t2 = _mm256_setzero_pd(), t3 = _mm256_setzero_pd();
        int i = j + 4;
        for (; i + 4 <= r; i += 4) {
            const __m256d xi = _mm256_loadu_pd(x + i);
            __m256d yi = _mm256_loadu_pd(y + i);
            const __m256d v0 = _mm256_loadu_pd(a0 + i), v1 = _mm256_loadu_pd(a1 + i),
                          v2 = _mm256_loadu_pd(a2 + i), v3 = _mm256_loadu_pd(a3 + i);
            yi = _mm256_fmadd_pd(v0, x0, yi);
            t0 = _mm256_fmadd_pd(v0, xi, t0);
            yi = _mm256_fmadd_pd(v1, x1, yi);
            t1 = _mm256_fmadd_pd(v1, xi, t1);
            yi = _mm256_fmadd_pd(v2, x2, yi);
            t2 = _mm256_fmadd_pd(v2, xi, t2);
            yi = _mm256_fmadd_pd(v3, x3, yi);
            t3 = _mm256_fmadd_pd(v3, xi, t3);
            _mm256_storeu_pd(y + i, yi);
        }
        double u[4];
        lane_sums(t0, t1, t2, t3, u);
        for (; i < r; i++) {
            y[i] += a0[i] * x[j] + a1[i] * x[j + 1] + a2[i] * x[j + 2] + a3[i] * x[j + 3];
            u[0] += a0[i] * x[i];
            u[1] += a1[i] * x[i];
            u[2] += a2[i] * x[i];
            u[3] += a3[i] * x[i];
        }
        y[j] += u[0];
        y[j + 1] += u[1];
        y[j + 2] += u[2];
        y[j + 3] += u[3];
    }
    /* the last r % 4 columns */
    for (; j < r; j++) {
        const double *aj = a + (size_t) j * lda;
        double u = aj[j] * x[j];
        for (int i = j + 1; i < r; i++) {
            y[i] += aj[i] * x[j];
            u += aj[i] * x[i];
        }
        y[j] += u;
    }
}

/* y -= A x for A (len x nc, leading dimension lda) and x with stride incx:
   four columns at a time, each of y's entries less their four terms, four
   rows per FMA. */
__attribute__((target("avx2,fma")))
static void gemv_sub(int len, int nc, const double *a, int lda, const double *x, int incx,
                     double *y)
{
    int j = 0;
    for (; j + 4 <= nc; j += 4) {
        const double *a0 = a + (size_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                     *a3 = a2 + lda;
        const double s0 = x[(size_t) j * incx], s1 = x[(size_t) (j + 1) * incx],
                     s2 = x[(size_t) (j + 2) * incx], s3 = x[(size_t) (j + 3) * incx];
        const __m256d x0 = _mm256_set1_pd(s0), x1 = _mm256_set1_pd(s1),
                      x2 = _mm256_set1_pd(s2), x3 = _mm256_set1_pd(s3);
        int i = 0;
        for (; i + 4 <= len; i += 4) {
            __m256d yi = _mm256_loadu_pd(y + i);
            yi = _mm256_fnmadd_pd(_mm256_loadu_pd(a0 + i), x0, yi);
            yi = _mm256_fnmadd_pd(_mm256_loadu_pd(a1 + i), x1, yi);
            yi = _mm256_fnmadd_pd(_mm256_loadu_pd(a2 + i), x2, yi);
            yi = _mm256_fnmadd_pd(_mm256_loadu_pd(a3 + i), x3, yi);
            _mm256_storeu_pd(y + i, yi);
        }
        for (; i < len; i++) y[i] = y[i] - a0[i] * s0 - a1[i] * s1 - a2[i] * s2 - a3[i] * s3;
    }
    for (; j < nc; j++) {
        const double *aj = a + (size_t) j * lda;
        const double s = x[(size_t) j * incx];
        for (int i = 0; i < len; i++) y[i] -= aj[i] * s;
    }
}

/* out = A' v for A (len x nc, leading dimension lda): four columns at a
   time, each dot product in four lanes summed at its end. */
__attribute__((target("avx2,fma")))
static void gemv_t(int len, int nc, const double *a, int lda, const double *v, double *out)
{
    int j = 0;
    for (; j + 4 <= nc; j += 4) {
        const double *a0 = a + (size_t) j * lda, *a1 = a0 + lda, *a2 = a1 + lda,
                     *a3 = a2 + lda;
        __m256d t0 = _mm256_setzero_pd(), t1 = _mm256_setzero_pd(),
                t2 = _mm256_setzero_pd(), t3 = _mm256_setzero_pd();
        int i = 0;
        for (; i + 4 <= len; i += 4) {
            const __m256d vi = _mm256_loadu_pd(v + i);
            t0 = _mm256_fmadd_pd(_mm256_loadu_pd(a0 + i), vi, t0);
            t1 = _mm256_fmadd_pd(_mm256_loadu_pd(a1 + i), vi, t1);
            t2 = _mm256_fmadd_pd(_mm256_loadu_pd(a2 + i), vi, t2);
            t3 = _mm256_fmadd_pd(_mm256_loadu_pd(a3 + i), vi, t3);
        }
        double u[4];
        lane_sums(t0, t1, t2, t3, u);
        for (; i < len; i++) {
            u[0] += a0[i] * v[i];
            u[1] += a1[i] * v[i];
            u[2] += a2[i] * v[i];
            u[3] += a3[i] * v[i];
        }
        for (int c = 0; c < 4; c++) out[j + c] = u[c];
    }
    for (; j < nc; j++) {
        const double *aj = a + (size_t) j * lda;
        double u = 0.0;
        for (int i = 0; i < len; i++) u += aj[i] * v[i];
        out[j] = u;
    }
}

#endif /* RFF_MATVEC_AVX2 */

/* y = A x for the symmetric r x r matrix A of which the lower triangle is
   at a (leading dimension lda), on one core: the matrix-vector half of a
   tridiagonalization (rff_tridiag()). Returns 0, or -1 (y unchanged) when
   the processor lacks the kernel. */
int rff_symv_lower(int r, const double *a, int lda, const double *x, double *y)
{
#ifdef RFF_MATVEC_AVX2
    if (!rff_gemm_ready()) return -1;
    if (r > 0) symv_lower(r, a, lda, x, y);
    return 0;
#else
    (void) r; (void) a; (void) lda; (void) x; (void) y;
    return -1;
#endif
}

/* y -= A x (dgemv "N" with alpha = -1, beta = 1): A len x nc (leading
   dimension lda), x of stride incx. Returns 0, or -1 (y unchanged) when
   the processor lacks the kernel. */
int rff_gemv_sub(int len, int nc, const double *a, int lda, const double *x, int incx,
                 double *y)
{
#ifdef RFF_MATVEC_AVX2
    if (!rff_gemm_ready()) return -1;
    if (len > 0 && nc > 0) gemv_sub(len, nc, a, lda, x, incx, y);
    return 0;
#else
    (void) len; (void) nc; (void) a; (void) lda; (void) x; (void) incx; (void) y;
    return -1;
#endif
}

/* out = A' v (dgemv "T" with alpha = 1, beta = 0): A len x nc (leading
   dimension lda), out of length nc. Returns 0, or -1 (out unchanged) when
   the processor lacks the kernel. */
int rff_gemv_t(int len, int nc, const double *a, int lda, const double *v, double *out)
{
#ifdef RFF_MATVEC_AVX2
    if (!rff_gemm_ready()) return -1;
    if (nc > 0) {
        if (len > 0) gemv_t(len, nc, a, lda, v, out);
        else for (int j = 0; j < nc; j++) out[j] = 0.0;
    }
    return 0;
#else
    (void) len; (void) nc; (void) a; (void) lda; (void) v; (void) out;
    return -1;
#endif
}
