/* The blocking of rff's own matrix product (gemm.c) and its register
   kernels on 512-bit registers (gemm512.c), shared by the two files. */
#ifndef RFF_GEMM_H
#define RFF_GEMM_H

#include <stddef.h>

/* Not on Windows: its gcc does not align the stack for spills of 32- and
   64-byte registers (a long-standing defect), and no test here can show
   the kernels correct there; R's BLAS runs every product instead. Nor off
   x86-64, where R's BLAS runs them too. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_WIN32)
#define RFF_GEMM_AVX2 1
#include <immintrin.h>
#define RFF_GEMM_AVX512 1
#endif

#define GEMM_MR 8    /* rows of c per register block */
#define GEMM_NR 6    /* columns of c per register block */
#define GEMM_KC 256  /* inner terms per panel */
#define GEMM_MC 128  /* rows of op(a) per panel (a multiple of GEMM_MR) */
#define GEMM_NARROW 64  /* products with at most this many columns of c read
                           a where it lies (micro_rows(), micro_cols()) */

/* The 6 columns of a (column-major, stride lda) that the kernels computing
   c' = b'a stream down their rows; columns past mj read column 0 again
   (their sums are not stored). */
static inline void gemm_cols_streams(const double *a, int lda, int mj,
                                     const double *z[GEMM_NR])
{
    for (int jj = 0; jj < GEMM_NR; jj++) z[jj] = a + (jj < mj ? (size_t) jj * lda : 0);
}

#ifdef RFF_GEMM_AVX512
/* Whether the processor (and the system, which must save the registers)
   runs AVX-512F. */
int rff_gemm512_supported(void);
/* gemm.c's micro(), micro_rows() and micro_cols() for `nb` (1 or 2)
   register blocks side by side: rows i..i+8 nb of c (micro, micro_rows)
   or columns (micro_cols), full blocks only (mi = 8, no triangle), but for
   micro_cols's last block, of which the first ni columns of c are kept
   (its packed panel is zero past them). The packed panels of the blocks
   follow each other (a panel of kc terms each); micro_rows reads 8 nb
   rows of a in place. Each entry is summed by one FMA per term, in the
   order of the terms, as the AVX2 kernels sum it: the results are the same
   to the last bit. */
void rff_micro512(int nb, int kc, const double *pa, const double *pb, double *c, int ldc,
                  int nj);
void rff_micro_rows512(int nb, int kc, const double *a, int lda, const double *pb, double *c,
                       int ldc, int nj);
void rff_micro_cols512(int nb, int kc, const double *pb, const double *a, int lda, double *c,
                       int ldc, int mj, int ni);
#endif

#endif
