/* The Householder steps of a symmetric eigenproblem on rff's own kernels
   (gemm.c): the tridiagonalization of LAPACK's dsytrd("L"), its
   rank-2k updates of the trailing matrix and the matrix-vector products of
   its panels (dlatrd's symmetric one) here, and the back transformation
   z <- Q z of dormtr("L", "L", "N"). On the reference BLAS their products
   run at its speed (n = 2000 on one core: dsytrd 2.1 s, dormtr of all
   vectors 5.5 s), here at the kernels'. Above blas.c and gemm.c. */
#include "rff.h"

/* Columns per panel of the tridiagonalization, and the order below which
   the rest is reduced unblocked (dsytrd's defaults). */
#define RFF_TRIDIAG_NB 32
#define RFF_TRIDIAG_NX 32

/* y -= A x and out = A' v (A len x nc) for latrd_lower(): rff's kernels
   (matvec.c), else the BLAS. */
static void sub_ax(int len, int nc, const double *a, int lda, const double *x, int incx,
                   double *y)
{
    const int inc = 1;
    const double one = 1.0, minus = -1.0;
    if (rff_gemv_sub(len, nc, a, lda, x, incx, y) != 0)
        F77_CALL(dgemv)("N", &len, &nc, &minus, a, &lda, x, &incx, &one, y, &inc FCONE);
}

static void at_v(int len, int nc, const double *a, int lda, const double *v, double *out)
{
    const int inc = 1;
    const double one = 1.0, zero = 0.0;
    if (rff_gemv_t(len, nc, a, lda, v, out) != 0)
        F77_CALL(dgemv)("T", &len, &nc, &one, a, &lda, v, &inc, &zero, out, &inc FCONE);
}

/* One panel of dsytrd("L"), as LAPACK's dlatrd("L"): the first nb
   columns of the trailing matrix a (m x m, m > nb, leading dimension lda)
   reduced by reflectors H(i) = I - tau[i] v v' (v stored below the
   subdiagonal of column i, its unit entry at the subdiagonal), the
   off-diagonal e, and W (m x nb, leading dimension ldw) such that the
   trailing matrix's update is A22 - V W' - W V'. The product with the
   trailing matrix, which reads all of it for each column, is
   rff_symv_lower() (one core at the memory's speed, where the reference
   BLAS's dsymv sums its dot products one term at a time); the small
   corrections by the panel's earlier columns are rff_gemv_sub() and
   rff_gemv_t() (matvec.c), where the reference BLAS's dgemv ran at 1.3
   GF/s. */
static void latrd_lower(int m, int nb, double *a, int lda, double *e, double *tau,
                        double *w, int ldw)
{
    const int inc = 1;
    const double one = 1.0, zero = 0.0;
    for (int i = 0; i < nb; i++) {
        double *ac = a + (size_t) i * lda;
        int len = m - i;
        if (i > 0) {
            /* column i less the panel's earlier updates: A -= V W' + W V' */
            sub_ax(len, i, a + i, lda, w + i, ldw, ac + i);
            sub_ax(len, i, w + i, ldw, a + i, lda, ac + i);
        }
        if (i >= m - 1) continue;
        int len1 = m - i - 1;
        /* the reflector taking rows i + 2.. of column i to zero */
        F77_CALL(dlarfg)(&len1, ac + i + 1, ac + (i + 2 < m ? i + 2 : m - 1), &inc, tau + i);
        e[i] = ac[i + 1];
        ac[i + 1] = 1.0;
        const double *v = ac + i + 1;
        double *wi = w + (size_t) i * ldw + i + 1;
        /* W(i+1:m, i) = A22 v, A22 the trailing matrix as it was at the panel's start */
        const double *a22 = a + (size_t) (i + 1) * lda + i + 1;
        if (rff_symv_lower(len1, a22, lda, v, wi) != 0)
            F77_CALL(dsymv)("L", &len1, &one, a22, &lda, v, &inc, &zero, wi, &inc FCONE);
        if (i > 0) {
            /* less the panel's earlier updates of A22, applied to v */
            double *wt = w + (size_t) i * ldw;
            at_v(len1, i, w + i + 1, ldw, v, wt);
            sub_ax(len1, i, a + i + 1, lda, wt, 1, wi);
            at_v(len1, i, a + i + 1, lda, v, wt);
            sub_ax(len1, i, w + i + 1, ldw, wt, 1, wi);
        }
        double t = tau[i];
        F77_CALL(dscal)(&len1, &t, wi, &inc);
        double alpha = -0.5 * t * F77_CALL(ddot)(&len1, wi, &inc, v, &inc);
        F77_CALL(daxpy)(&len1, &alpha, v, &inc, wi, &inc);
    }
}

/* Columns of the trailing matrix per block of its update. */
#define RFF_TRIDIAG_COLS 128

/* The lower triangle (and the upper part of its diagonal blocks) of c
   (r x r, leading dimension ldc) += x y' for x and y (r x k, leading
   dimension r): in fixed blocks of RFF_TRIDIAG_COLS columns shared among
   `threads` cores, each block from its diagonal down (half the work of
   the whole square); each entry is summed by one product, whichever
   thread runs it. */
static void trailing_lower(int r, int k, const double *x, const double *y, double *c,
                           int ldc, int threads)
{
    const int nb = (r + RFF_TRIDIAG_COLS - 1) / RFF_TRIDIAG_COLS;
    if (threads > nb) threads = nb;
    if (threads < 1) threads = 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
    for (int blk = 0; blk < nb; blk++) {
        const int c0 = blk * RFF_TRIDIAG_COLS;
        const int wb = r - c0 < RFF_TRIDIAG_COLS ? r - c0 : RFF_TRIDIAG_COLS;
        rff_dgemm_seq("N", "T", r - c0, wb, k, x + c0, r, y + c0, r, 1.0,
                      c + c0 + (size_t) c0 * ldc, ldc);
    }
}

/* dsytrd("L") of a (n x n, leading dimension n; its lower triangle is
   read and overwritten, its upper one left as it was, less some entries
   next to the diagonal): the diagonal d, off-diagonal e and reflectors (in
   a below the subdiagonal, and tau) of Q'AQ = T. As dsytrd: each panel of
   RFF_TRIDIAG_NB columns by latrd_lower(), which also returns W, then the
   trailing matrix A22 -= V W' + W V', here as one product on `threads`
   cores over the lower triangle of A22 (trailing_lower()), the last
   RFF_TRIDIAG_NX columns by dsytd2. Returns LAPACK's info (0: success). Must be called outside rff's parallel
   regions, with rff's own kernel in use. */
int rff_tridiag(double *a, int n, double *d, double *e, double *tau, int threads)
{
    const int nb = RFF_TRIDIAG_NB;
    const size_t nn = (size_t) n;
    int i = 0, info = 0;
    double *w = (double *) R_alloc(nn * nb + 1, sizeof(double));
    /* [-V, -W] and [W, V] (r x 2 nb): A22 += [-V, -W] [W, V]' in one product */
    double *neg = (double *) R_alloc(2 * nn * nb + 1, sizeof(double));
    double *pos = (double *) R_alloc(2 * nn * nb + 1, sizeof(double));
    /* as dsytrd: panels while more than RFF_TRIDIAG_NX columns are left
       (RFF_TRIDIAG_NX >= nb, so each panel has rows below it) */
    for (; n - i > RFF_TRIDIAG_NX; i += nb) {
        int m = n - i, r = m - nb;
        double *ai = a + (size_t) i * nn + i;
        latrd_lower(m, nb, ai, n, e + i, tau + i, w, m);
        /* V: rows nb.. of the panel's columns (with latrd_lower()'s unit
           entries); W: rows nb.. of w */
        const double *V = ai + nb, *W = w + nb;
        double *a22 = ai + (size_t) nb * nn + nb;
        for (int j = 0; j < nb; j++) {
            const double *vj = V + (size_t) j * nn, *wj = W + (size_t) j * m;
            double *n1 = neg + (size_t) j * r, *n2 = neg + (size_t) (j + nb) * r;
            double *p1 = pos + (size_t) j * r, *p2 = pos + (size_t) (j + nb) * r;
            for (int k = 0; k < r; k++) {
                n1[k] = -vj[k];
                n2[k] = -wj[k];
                p1[k] = wj[k];
                p2[k] = vj[k];
            }
        }
        trailing_lower(r, 2 * nb, neg, pos, a22, n, threads);
        for (int j = i; j < i + nb; j++) {
            a[(size_t) j * nn + j + 1] = e[j];
            d[j] = a[(size_t) j * nn + j];
        }
        rff_check_interrupt();
    }
    int m = n - i;
    F77_CALL(dsytd2)("L", &m, a + (size_t) i * nn + i, &n, d + i, e + i, tau + i, &info FCONE);
    return info;
}

/* Reflectors per block (as dormqr's blocks): H(i0) ... H(i0 + nb - 1) =
   I - V T V' (the compact WY form, Schreiber and Van Loan 1989), T from
   LAPACK's dlarft. */
#define RFF_REFLECT_NB 64
/* Columns of z per panel: a fixed partition shared among rff's threads, so
   the result does not depend on their number. */
#define RFF_REFLECT_PANEL 128

/* z (n x k, leading dimension n) <- Q z, Q = H(0) H(1) ... H(n - 2), where
   H(i) = I - tau[i] v v' with v zero above row i + 1, 1 at row i + 1 and
   a[i + 2 .. n - 1, i] below (dsytrd's lower storage). Blocks of
   reflectors are applied last first; within a block each panel of columns
   takes W = V'Z, then Z += V (-T W). Must be called outside rff's parallel
   regions, with rff's own kernel in use (rff_blas_own()). */
void rff_reflect(const double *a, int n, const double *tau, double *z, int k,
                 int threads)
{
    if (n < 2 || k < 1) return;
    const int nr = n - 1, nb = RFF_REFLECT_NB, panel = RFF_REFLECT_PANEL;
    const int np = (k + panel - 1) / panel;
    const size_t nn = (size_t) n;
    if (threads > np) threads = np;
    if (threads < 1) threads = 1;
    double *V = (double *) R_alloc(nn * nb, sizeof(double));
    double *T = (double *) R_alloc((size_t) nb * nb, sizeof(double));
    double *W = (double *) R_alloc((size_t) 2 * nb * panel * threads, sizeof(double));
    for (int b = (nr - 1) / nb; b >= 0; b--) {
        const int i0 = b * nb, ib = nr - i0 < nb ? nr - i0 : nb;
        const int rows = nr - i0;   /* rows i0 + 1 .. n - 1 of z */
        /* V (rows x ib): column j is reflector i0 + j from its row i0 + 1 */
        for (int j = 0; j < ib; j++) {
            double *vj = V + (size_t) j * rows;
            const double *aj = a + (size_t) (i0 + j) * nn + i0 + 1;
            for (int r = 0; r < j; r++) vj[r] = 0.0;
            vj[j] = 1.0;
            for (int r = j + 1; r < rows; r++) vj[r] = aj[r];
        }
        F77_CALL(dlarft)("F", "C", &rows, &ib, V, &rows, tau + i0, T, &nb FCONE FCONE);
        /* -T, zero below the diagonal, for Z += V (-T W) */
        for (int j = 0; j < ib; j++)
            for (int i = 0; i < ib; i++)
                T[i + (size_t) j * nb] = i <= j ? -T[i + (size_t) j * nb] : 0.0;
        double *zb = z + i0 + 1;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1)
#endif
        for (int p = 0; p < np; p++) {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            const int c0 = p * panel, cw = k - c0 < panel ? k - c0 : panel;
            double *w1 = W + (size_t) 2 * nb * panel * tid, *w2 = w1 + (size_t) nb * panel;
            double *zp = zb + (size_t) c0 * nn;
            rff_dgemm_seq("T", "N", ib, cw, rows, V, rows, zp, n, 0.0, w1, nb);
            rff_dgemm_seq("N", "N", ib, cw, ib, T, nb, w1, nb, 0.0, w2, nb);
            rff_dgemm_seq("N", "N", rows, cw, ib, V, rows, w2, nb, 1.0, zp, n);
        }
        if (b % 4 == 0) rff_check_interrupt();
    }
}
