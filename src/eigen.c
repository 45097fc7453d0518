/* The eigenproblem of an n x n Gram matrix (the thin eigenproblem of a
   lambda path with fewer rows than features), keeping only the eigenpairs
   the path uses: those above a fraction of the largest eigenvalue. The
   LAPACK steps of dsyevr done one by one, so that the eigenvalues are known
   before any eigenvector is computed: Householder tridiagonalization
   (dsytrd), all eigenvalues of the tridiagonal matrix (dsterf), the kept
   eigenvectors of the tridiagonal matrix by MRRR (dstemr), and their back
   transformation by the Householder reflectors (dormtr) in fixed panels of
   columns shared among rff's threads. The back transformation of all n
   vectors is two thirds of dsyevr's work; a smooth kernel's Gram matrix
   has few eigenvalues above 1e-12 of its largest (114 of 750 on quakes),
   and only their vectors are formed. Above blas.c and runtime.c. */
#include "rff.h"
#include <float.h>

/* Columns of the eigenvectors per dormtr call: a fixed partition, so the
   result does not depend on the number of threads. */
#define RFF_EIGEN_PANEL 64

/* dstemr is part of every LAPACK that has dsyevr (which calls it), but
   R's header does not declare it. */
extern void F77_NAME(dstemr)(const char *jobz, const char *range, const int *n,
                             double *d, double *e, const double *vl,
                             const double *vu, const int *il, const int *iu,
                             int *m, double *w, double *z, const int *ldz,
                             const int *nzc, int *isuppz, int *tryrac,
                             double *work, const int *lwork, int *iwork,
                             const int *liwork, int *info FCLEN FCLEN);

/* The eigenvalues of K (n x n, symmetric; its lower triangle is read)
   above rel_tol times the largest (and above 0), in decreasing order, with
   their unit eigenvectors `left` (n x k); NULL when a LAPACK step fails
   (the caller then solves the whole problem another way). */
SEXP rff_gram_eigen(SEXP K, SEXP rel_tol_, SEXP threads_)
{
    rff_check_real_matrix(K, "K");
    int n = Rf_nrows(K);
    if (Rf_ncols(K) != n) Rf_error("`K` must be square");
    double rel_tol = Rf_asReal(rel_tol_);
    if (!(rel_tol >= 0) || !(rel_tol < 1)) Rf_error("`rel_tol` must be in [0, 1)");
    int threads = rff_threads(threads_);
    rff_check_finite(REAL(K), (R_xlen_t) n * n, "K");
    int info = 0, lwork = -1;
    double wq = 0;
    size_t nn = (size_t) n;
    double *a = (double *) R_alloc(nn * nn + 1, sizeof(double));
    double *d = (double *) R_alloc(nn + 1, sizeof(double));
    double *e = (double *) R_alloc(nn + 1, sizeof(double));
    double *tau = (double *) R_alloc(nn + 1, sizeof(double));
    if (n > 0) memcpy(a, REAL(K), sizeof(double) * nn * nn);
    if (n > 0) {
        F77_CALL(dsytrd)("L", &n, a, &n, d, e, tau, &wq, &lwork, &info FCONE);
        if (info != 0) return R_NilValue;
        lwork = (int) wq > 1 ? (int) wq : 1;
        double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
        F77_CALL(dsytrd)("L", &n, a, &n, d, e, tau, work, &lwork, &info FCONE);
        if (info != 0) return R_NilValue;
    }
    /* all eigenvalues (ascending) from copies: dsterf overwrites d and e */
    double *ev = (double *) R_alloc(nn + 1, sizeof(double));
    double *ee = (double *) R_alloc(nn + 1, sizeof(double));
    if (n > 0) {
        memcpy(ev, d, sizeof(double) * nn);
        if (n > 1) memcpy(ee, e, sizeof(double) * (nn - 1));
        F77_CALL(dsterf)(&n, ev, ee, &info);
        if (info != 0) return R_NilValue;
    }
    double top = n > 0 && ev[n - 1] > 0 ? ev[n - 1] : 0;
    int k = 0;
    for (int i = 0; i < n; i++) if (ev[i] > top * rel_tol) k++;
    SEXP values = PROTECT(Rf_allocVector(REALSXP, k));
    SEXP left = PROTECT(Rf_allocMatrix(REALSXP, n, k));
    if (k > 0) {
        /* the eigenvalues in (top * rel_tol, 2 top]: by value, not by index
           (MRRR may return more than an index range asks for when
           eigenvalues cluster at its end), with room for all n */
        int il = 0, iu = 0, m = 0, liwork = -1, iwq = 0, tryrac = 1, nzc = n;
        double vl = top * rel_tol, vu = 2 * top + DBL_MIN;
        int *isuppz = (int *) R_alloc(2 * nn, sizeof(int));
        double *w = (double *) R_alloc(nn, sizeof(double));
        double *z = (double *) R_alloc(nn * nn, sizeof(double));
        /* dstemr needs e of length n */
        e[n - 1] = 0;
        lwork = -1;
        F77_CALL(dstemr)("V", "V", &n, d, e, &vl, &vu, &il, &iu, &m, w, z, &n, &nzc,
                         isuppz, &tryrac, &wq, &lwork, &iwq, &liwork, &info
                         FCONE FCONE);
        if (info != 0) { UNPROTECT(2); return R_NilValue; }
        lwork = (int) wq > 1 ? (int) wq : 1;
        liwork = iwq > 1 ? iwq : 1;
        double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
        int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
        F77_CALL(dstemr)("V", "V", &n, d, e, &vl, &vu, &il, &iu, &m, w, z, &n, &nzc,
                         isuppz, &tryrac, work, &lwork, iwork, &liwork, &info
                         FCONE FCONE);
        if (info != 0 || m < 1 || m > n) { UNPROTECT(2); return R_NilValue; }
        if (m != k) {
            /* a count at the threshold that rounding moved by an eigenvalue */
            UNPROTECT(2);
            k = m;
            values = PROTECT(Rf_allocVector(REALSXP, k));
            left = PROTECT(Rf_allocMatrix(REALSXP, n, k));
        }
        /* the back transformation, panel by panel (each column of z is
           transformed alone: the same result for any partition) */
        int panel = RFF_EIGEN_PANEL;
        int np = (k + panel - 1) / panel;
        int pw = -1;
        lwork = -1;
        F77_CALL(dormtr)("L", "L", "N", &n, &panel, a, &n, tau, z, &n, &wq, &pw,
                         &info FCONE FCONE FCONE);
        if (info != 0) { UNPROTECT(2); return R_NilValue; }
        int plw = (int) wq > 1 ? (int) wq : 1;
        if (threads > np) threads = np;
        if (threads < 1) threads = 1;
        double *pwork = (double *) R_alloc((size_t) plw * threads, sizeof(double));
        /* dormtr writes to the reflectors while it runs (each one's leading
           entry, restored on exit): every further thread has a copy */
        double **pa = (double **) R_alloc((size_t) threads, sizeof(double *));
        pa[0] = a;
        for (int t = 1; t < threads; t++) {
            pa[t] = (double *) R_alloc(nn * nn, sizeof(double));
            memcpy(pa[t], a, sizeof(double) * nn * nn);
        }
        int fails = 0;
        int prev = rff_blas_set_threads(1);
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (threads > 1) reduction(+:fails)
#endif
        for (int p = 0; p < np; p++) {
            int c0 = p * panel;
            int cw = k - c0 < panel ? k - c0 : panel;
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            int pinfo = 0;
            F77_CALL(dormtr)("L", "L", "N", &n, &cw, pa[tid], &n, tau, z + (size_t) c0 * nn,
                             &n, pwork + (size_t) plw * tid, &plw, &pinfo
                             FCONE FCONE FCONE);
            if (pinfo != 0) fails++;
        }
        rff_blas_set_threads(prev);
        if (fails) { UNPROTECT(2); return R_NilValue; }
        /* decreasing order, as eigen() gives */
        double *vv = REAL(values), *lv = REAL(left);
        for (int j = 0; j < k; j++) {
            vv[j] = w[k - 1 - j];
            memcpy(lv + (size_t) j * nn, z + (size_t) (k - 1 - j) * nn,
                   sizeof(double) * nn);
        }
    }
    SEXP out = rff_list2("values", values, "left", left);
    UNPROTECT(2);
    return out;
}
