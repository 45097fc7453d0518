/* The Householder steps of a symmetric eigenproblem on rff's own product
   kernel (gemm.c): the tridiagonalization of LAPACK's dsytrd("L"), with
   its rank-2k updates of the trailing matrix here, and the back
   transformation z <- Q z of dormtr("L", "L", "N"). On the reference BLAS
   their products run at its speed (n = 2000 on one core: dsytrd 2.1 s,
   dormtr of all vectors 5.5 s), here at the kernel's; what remains at the
   BLAS's speed is dsytrd's matrix-vector half (in LAPACK's dlatrd). Above
   blas.c. */
#include "rff.h"

/* Columns per panel of the tridiagonalization, and the order below which
   the rest is reduced unblocked (dsytrd's defaults). */
#define RFF_TRIDIAG_NB 32
#define RFF_TRIDIAG_NX 32

/* dsytrd("L") of a (n x n, leading dimension n; its lower triangle is
   read, its upper one overwritten): the diagonal d, off-diagonal e and
   reflectors (in a below the subdiagonal, and tau) of Q'AQ = T. As
   dsytrd: each panel of RFF_TRIDIAG_NB columns by LAPACK's dlatrd, which
   also returns W, then the trailing matrix A22 -= V W' + W V', here as two
   products on `threads` cores over all of A22 (the upper triangle is not
   read again), the last RFF_TRIDIAG_NX columns by dsytd2. Returns
   LAPACK's info (0: success). Must be called outside rff's parallel
   regions, with rff's own kernel in use. */
int rff_tridiag(double *a, int n, double *d, double *e, double *tau, int threads)
{
    const int nb = RFF_TRIDIAG_NB;
    const size_t nn = (size_t) n;
    int i = 0, info = 0;
    double *w = (double *) R_alloc(nn * nb + 1, sizeof(double));
    double *neg = (double *) R_alloc(nn * nb + 1, sizeof(double));
    /* as dsytrd: panels while more than RFF_TRIDIAG_NX columns are left
       (RFF_TRIDIAG_NX >= nb, so each panel has rows below it) */
    for (; n - i > RFF_TRIDIAG_NX; i += nb) {
        int m = n - i, r = m - nb;
        double *ai = a + (size_t) i * nn + i;
        F77_CALL(dlatrd)("L", &m, &nb, ai, &n, e + i, tau + i, w, &m FCONE);
        /* V: rows nb.. of the panel's columns (with dlatrd's unit entries);
           W: rows nb.. of w */
        const double *V = ai + nb, *W = w + nb;
        double *a22 = ai + (size_t) nb * nn + nb;
        for (int j = 0; j < nb; j++)
            for (int k = 0; k < r; k++) neg[k + (size_t) j * r] = -V[k + (size_t) j * nn];
        rff_dgemm_threads("N", "T", r, r, nb, neg, r, W, m, 1.0, a22, n, threads);
        for (int j = 0; j < nb; j++)
            for (int k = 0; k < r; k++) neg[k + (size_t) j * r] = -W[k + (size_t) j * m];
        rff_dgemm_threads("N", "T", r, r, nb, neg, r, V, n, 1.0, a22, n, threads);
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
