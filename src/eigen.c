/* Symmetric eigenproblems of ridge paths: the D x D matrix Z'Z, or the
   n x n Gram matrix of the thin eigenproblem (fewer rows than features),
   of which only the eigenpairs the path uses are kept: those above a
   fraction of the largest eigenvalue. The LAPACK steps of dsyevr done one
   by one: Householder tridiagonalization (dsytrd), all eigenpairs of the
   tridiagonal matrix by MRRR (dstemr, O(n^2)), and the back transformation
   of the kept eigenvectors by the Householder reflectors (dormtr), in
   fixed panels of columns shared among rff's threads; or, for a Gram
   matrix of numerical rank at most n / 3, from its pivoted Cholesky
   factor (gram_low_rank()). That back
   transformation of all n vectors is two thirds of dsyevr's work; a smooth
   kernel's Gram matrix has few eigenvalues above 1e-12 of its largest (114
   of 750 on quakes), and only their vectors are transformed. Above blas.c
   runtime.c and reflect.c. */
#include "rff.h"

/* Columns of the eigenvectors per dormtr call: a fixed partition, so the
   result does not depend on the number of threads. */
#define RFF_EIGEN_PANEL 64
/* The most memory the back transformation's further threads may take for
   their copies of the reflectors (bytes): 256 MB, 2 threads up to n = 5792. */
#define RFF_EIGEN_COPY_BYTES 268435456.0

/* The low-rank route of a Gram matrix (gram_low_rank()): columns of its
   pivoted Cholesky factor are added while the largest residual diagonal
   exceeds RFF_PIVOT_TOL of the largest diagonal, up to rank n /
   RFF_LOW_RANK_FRACTION (at n / 3 it costs about a third of the
   tridiagonal route); a residual diagonal below -RFF_PIVOT_NEGATIVE of the
   largest diagonal means the matrix is not positive semidefinite. */
#define RFF_PIVOT_TOL 1e-14
#define RFF_LOW_RANK_FRACTION 3
#define RFF_PIVOT_NEGATIVE 1e-10

/* dstemr is part of every LAPACK that has dsyevr (which calls it), but
   R's header does not declare it. */
extern void F77_NAME(dstemr)(const char *jobz, const char *range, const int *n,
                             double *d, double *e, const double *vl,
                             const double *vu, const int *il, const int *iu,
                             int *m, double *w, double *z, const int *ldz,
                             const int *nzc, int *isuppz, int *tryrac,
                             double *work, const int *lwork, int *iwork,
                             const int *liwork, int *info FCLEN FCLEN);

/* z (n x k) <- Q z, Q the product of dsytrd's reflectors (in a, tau),
   in fixed panels of columns shared among rff's threads (each column is
   transformed alone; the partition is fixed, so the result does not depend
   on `threads`); under a BLAS with threads of its own (OpenBLAS, BLIS),
   one call on them. 0 when dormtr fails. */
static int back_transform(const double *a, int n, const double *tau, double *z, int k,
                          int threads)
{
    size_t nn = (size_t) n;
    int info = 0, lwork = -1;
    double wq = 0;
    if (rff_blas_own()) {
        /* the reflectors in blocks, products on rff's kernel (reflect.c) */
        rff_reflect(a, n, tau, z, k, threads);
        return 1;
    }
    if (rff_blas_split() == RFF_SPLIT_BLAS) {
        /* one call on the BLAS's threads as they are (as dsyevr would run):
           panels would each read all the reflectors again, and setting the
           BLAS's threads from `threads` would change its rounding */
        F77_CALL(dormtr)("L", "L", "N", &n, &k, a, &n, tau, z, &n, &wq, &lwork, &info
                         FCONE FCONE FCONE);
        if (info != 0) return 0;
        lwork = (int) wq > 1 ? (int) wq : 1;
        double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
        F77_CALL(dormtr)("L", "L", "N", &n, &k, a, &n, tau, z, &n, work, &lwork, &info
                         FCONE FCONE FCONE);
        return info == 0;
    }
    int panel = RFF_EIGEN_PANEL;
    int np = (k + panel - 1) / panel;
    F77_CALL(dormtr)("L", "L", "N", &n, &panel, a, &n, tau, z, &n, &wq, &lwork, &info
                     FCONE FCONE FCONE);
    if (info != 0) return 0;
    int plw = (int) wq > 1 ? (int) wq : 1;
    if (threads > np) threads = np;
    /* each further thread copies the n x n reflectors: at most
       RFF_EIGEN_COPY_BYTES of copies in all */
    double copies = RFF_EIGEN_COPY_BYTES / ((double) nn * nn * sizeof(double));
    if (threads - 1 > copies) threads = 1 + (int) copies;
    if (threads < 1) threads = 1;
    double *pwork = (double *) R_alloc((size_t) plw * threads, sizeof(double));
    /* dormtr writes to the reflectors while it runs (each one's leading
       entry, restored on exit): every further thread has a copy */
    double **pa = (double **) R_alloc((size_t) threads, sizeof(double *));
    pa[0] = (double *) a;
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
    return fails == 0;
}

/* The eigenpairs of the symmetric matrix A (n x n; its lower triangle is
   read, or its upper one with `upper`): all n (`all`, in increasing order,
   as dsyevr gives them), or those above rel_tol times the largest (and
   above 0), in decreasing order; a list (values, vectors), or NULL when a
   LAPACK step fails. Memory beside A: its reflectors and the vectors (2 n^2
   for all, as dsyevr), and for the kept ones the tridiagonal matrix's n
   vectors, plus the copies of back_transform(). */
static SEXP sym_eigen(SEXP A, double rel_tol, int all, int upper, int threads)
{
    int n = Rf_nrows(A);
    int info = 0, lwork = -1, nprot = 0;
    double wq = 0;
    size_t nn = (size_t) n;
    SEXP out = R_NilValue;
    double *a = (double *) R_alloc(nn * nn + 1, sizeof(double));
    double *d = (double *) R_alloc(nn + 1, sizeof(double));
    double *e = (double *) R_alloc(nn + 1, sizeof(double));
    double *tau = (double *) R_alloc(nn + 1, sizeof(double));
    if (n > 0) memcpy(a, REAL(A), sizeof(double) * nn * nn);
    if (upper) rff_mirror_upper(a, n, n);
    if (n > 0 && rff_blas_own()) {
        /* its trailing updates on rff's kernel (reflect.c) */
        if (rff_tridiag(a, n, d, e, tau, threads) != 0) return R_NilValue;
    } else if (n > 0) {
        F77_CALL(dsytrd)("L", &n, a, &n, d, e, tau, &wq, &lwork, &info FCONE);
        if (info != 0) return R_NilValue;
        lwork = (int) wq > 1 ? (int) wq : 1;
        double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
        F77_CALL(dsytrd)("L", &n, a, &n, d, e, tau, work, &lwork, &info FCONE);
        if (info != 0) return R_NilValue;
    }
    /* all eigenpairs of the tridiagonal matrix by MRRR (O(n^2), as dsyevr
       does), ascending: for all of them, straight into the result */
    SEXP values = R_NilValue, vectors = R_NilValue;
    double *w, *z;
    if (all) {
        values = PROTECT(Rf_allocVector(REALSXP, n)); nprot++;
        vectors = PROTECT(Rf_allocMatrix(REALSXP, n, n)); nprot++;
        w = REAL(values);
        z = REAL(vectors);
    } else {
        w = (double *) R_alloc(nn + 1, sizeof(double));
        z = (double *) R_alloc(nn * nn + 1, sizeof(double));
    }
    int k = 0;
    if (n > 0) {
        int il = 0, iu = 0, m = 0, liwork = -1, iwq = 0, tryrac = 1, nzc = n;
        double vl = 0, vu = 0;
        int *isuppz = (int *) R_alloc(2 * nn, sizeof(int));
        /* dstemr needs e of length n */
        e[n - 1] = 0;
        lwork = -1;
        F77_CALL(dstemr)("V", "A", &n, d, e, &vl, &vu, &il, &iu, &m, w, z, &n, &nzc,
                         isuppz, &tryrac, &wq, &lwork, &iwq, &liwork, &info
                         FCONE FCONE);
        if (info != 0) goto done;
        lwork = (int) wq > 1 ? (int) wq : 1;
        liwork = iwq > 1 ? iwq : 1;
        double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
        int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
        F77_CALL(dstemr)("V", "A", &n, d, e, &vl, &vu, &il, &iu, &m, w, z, &n, &nzc,
                         isuppz, &tryrac, work, &lwork, iwork, &liwork, &info
                         FCONE FCONE);
        if (info != 0 || m != n) goto done;
        /* the kept ones are the last k: only their vectors are transformed */
        double top = w[n - 1] > 0 ? w[n - 1] : 0;
        if (all) k = n;
        else for (int i = 0; i < n; i++) if (w[i] > top * rel_tol) k++;
    }
    double *wk = w + (n - k), *zk = z + (size_t) (n - k) * nn;
    if (k > 0 && !back_transform(a, n, tau, zk, k, threads)) goto done;
    if (!all) {
        values = PROTECT(Rf_allocVector(REALSXP, k)); nprot++;
        vectors = PROTECT(Rf_allocMatrix(REALSXP, n, k)); nprot++;
        double *vv = REAL(values), *lv = REAL(vectors);
        for (int j = 0; j < k; j++) {
            /* decreasing order for the kept eigenpairs, as eigen() gives */
            int src = k - 1 - j;
            vv[j] = wk[src];
            memcpy(lv + (size_t) j * nn, zk + (size_t) src * nn, sizeof(double) * nn);
        }
    }
    out = rff_list2("values", values, "vectors", vectors);
done:
    UNPROTECT(nprot);
    return out;
}

/* The kept eigenpairs (those of sym_eigen() with rel_tol, decreasing) of
   a Gram matrix K (n x n, positive semidefinite by construction; its lower
   triangle is read) of low numerical rank, from its pivoted Cholesky
   factor: K = B B' + S, the columns of B (n x r) added, each at the row of
   the largest residual diagonal, while that exceeds RFF_PIVOT_TOL of K's
   largest diagonal; then B = Q R (dgeqrf), R R' = W diag(s) W'
   (sym_eigen()) and U = Q W (dormqr), so U is orthonormal to rounding.
   O(n r^2) instead of the O(n^3) of the tridiagonal route. NULL (the
   caller takes that route) when the rank would exceed n / 3, where this
   route stops paying, when K has no positive diagonal, when a residual
   diagonal is negative beyond rounding (K is not a Gram matrix), when the
   residual S, of trace at most the sum of the residual diagonals, may hold
   more than rel_tol of the largest eigenvalue, or when a LAPACK step
   fails. */
static SEXP gram_low_rank(SEXP K, double rel_tol, int threads)
{
    int n = Rf_nrows(K);
    if (n < RFF_LOW_RANK_FRACTION || !(rel_tol > 0)) return R_NilValue;
    size_t nn = (size_t) n;
    const double *k = REAL(K);
    double *d = (double *) R_alloc(nn, sizeof(double));
    double top = 0;
    for (size_t i = 0; i < nn; i++) {
        d[i] = k[i + i * nn];
        if (d[i] > top) top = d[i];
    }
    if (!(top > 0)) return R_NilValue;
    double tol = RFF_PIVOT_TOL * top;
    int cap = n / RFF_LOW_RANK_FRACTION;
    double *L = (double *) R_alloc(nn * (size_t) cap, sizeof(double));
    double *row = (double *) R_alloc((size_t) cap + 1, sizeof(double));
    char *done = (char *) R_alloc(nn, sizeof(char));
    memset(done, 0, nn);
    int r = 0, inc = 1;
    double minus = -1, one = 1;
    for (;;) {
        int p = -1;
        double best = tol;
        for (int i = 0; i < n; i++) if (!done[i] && d[i] > best) { best = d[i]; p = i; }
        if (p < 0) break;
        if (r == cap) return R_NilValue;
        if (r % 64 == 63) R_CheckUserInterrupt();
        double *l = L + (size_t) r * nn;
        /* column p of K from its lower triangle, less the part of the
           columns already taken */
        for (int i = 0; i < p; i++) l[i] = k[p + (size_t) i * nn];
        for (int i = p; i < n; i++) l[i] = k[i + (size_t) p * nn];
        if (r > 0) {
            for (int j = 0; j < r; j++) row[j] = L[p + (size_t) j * nn];
            F77_CALL(dgemv)("N", &n, &r, &minus, L, &n, row, &inc, &one, l, &inc FCONE);
        }
        double root = sqrt(best);
        done[p] = 1;
        for (int i = 0; i < n; i++) {
            /* the rows already taken are 0 here, as in exact arithmetic */
            if (done[i] && i != p) { l[i] = 0; continue; }
            l[i] /= root;
        }
        l[p] = root;
        d[p] = 0;
        for (int i = 0; i < n; i++) {
            if (done[i]) continue;
            d[i] -= l[i] * l[i];
            if (d[i] < -RFF_PIVOT_NEGATIVE * top) return R_NilValue;
        }
        r++;
    }
    if (r == 0) return R_NilValue;
    double resid = 0;
    for (int i = 0; i < n; i++) if (!done[i] && d[i] > 0) resid += d[i];
    /* B = Q R */
    int info = 0, lwork = -1;
    double wq = 0;
    double *tau = (double *) R_alloc((size_t) r, sizeof(double));
    F77_CALL(dgeqrf)(&n, &r, L, &n, tau, &wq, &lwork, &info);
    if (info != 0) return R_NilValue;
    lwork = (int) wq > 1 ? (int) wq : 1;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    F77_CALL(dgeqrf)(&n, &r, L, &n, tau, work, &lwork, &info);
    if (info != 0) return R_NilValue;
    /* S = R R' (its lower triangle), from R with zeros below */
    size_t rr = (size_t) r;
    double *Rt = (double *) R_alloc(rr * rr, sizeof(double));
    memset(Rt, 0, sizeof(double) * rr * rr);
    for (size_t j = 0; j < rr; j++)
        for (size_t i = 0; i <= j; i++) Rt[i + j * rr] = L[i + j * nn];
    SEXP S = PROTECT(Rf_allocMatrix(REALSXP, r, r));
    double zero = 0;
    F77_CALL(dsyrk)("L", "N", &r, &r, &one, Rt, &r, &zero, REAL(S), &r FCONE FCONE);
    SEXP e = PROTECT(sym_eigen(S, 0, 1, 0, threads));
    if (Rf_isNull(e)) {
        UNPROTECT(2);
        return R_NilValue;
    }
    const double *s = REAL(VECTOR_ELT(e, 0)), *W = REAL(VECTOR_ELT(e, 1));
    double largest = s[r - 1];
    int kept = 0;
    for (int j = 0; j < r; j++) if (largest > 0 && s[j] > largest * rel_tol) kept++;
    if (!(largest > 0) || resid > rel_tol * largest) {
        UNPROTECT(2);
        return R_NilValue;
    }
    SEXP values = PROTECT(Rf_allocVector(REALSXP, kept));
    SEXP left = PROTECT(Rf_allocMatrix(REALSXP, n, kept));
    double *v = REAL(values), *U = REAL(left);
    memset(U, 0, sizeof(double) * nn * (size_t) kept);
    for (int j = 0; j < kept; j++) {
        /* decreasing, as sym_eigen() gives the kept ones */
        int src = r - 1 - j;
        v[j] = s[src];
        memcpy(U + (size_t) j * nn, W + (size_t) src * rr, sizeof(double) * rr);
    }
    /* U = Q [W; 0] */
    SEXP out = R_NilValue;
    if (kept > 0) {
        lwork = -1;
        F77_CALL(dormqr)("L", "N", &n, &kept, &r, L, &n, tau, U, &n, &wq, &lwork, &info
                         FCONE FCONE);
        if (info == 0) {
            lwork = (int) wq > 1 ? (int) wq : 1;
            work = (double *) R_alloc((size_t) lwork, sizeof(double));
            F77_CALL(dormqr)("L", "N", &n, &kept, &r, L, &n, tau, U, &n, work, &lwork, &info
                             FCONE FCONE);
        }
    }
    if (info == 0) out = rff_list2("values", values, "vectors", left);
    UNPROTECT(4);
    return out;
}

/* The eigenvalues of K (n x n, symmetric; its lower triangle is read)
   above rel_tol times the largest (and above 0), in decreasing order, with
   their unit eigenvectors `left` (n x k); NULL when a LAPACK step fails
   (the caller then solves the whole problem another way). With
   `low_rank`, for a K positive semidefinite by construction (a Gram
   matrix), first by its pivoted Cholesky factor (gram_low_rank()) when
   its numerical rank is at most n / 3. */
SEXP rff_gram_eigen(SEXP K, SEXP rel_tol_, SEXP threads_, SEXP low_rank_)
{
    rff_check_real_matrix(K, "K");
    int n = Rf_nrows(K);
    if (Rf_ncols(K) != n) Rf_error("`K` must be square");
    double rel_tol = Rf_asReal(rel_tol_);
    if (!(rel_tol >= 0) || !(rel_tol < 1)) Rf_error("`rel_tol` must be in [0, 1)");
    int threads = rff_threads(threads_);
    rff_check_finite(REAL(K), (R_xlen_t) n * n, "K");
    int low_rank = Rf_asLogical(low_rank_);
    if (low_rank == NA_LOGICAL) Rf_error("`low_rank` must be TRUE or FALSE");
    SEXP e = PROTECT(low_rank ? gram_low_rank(K, rel_tol, threads) : R_NilValue);
    if (Rf_isNull(e)) {
        UNPROTECT(1);
        e = PROTECT(sym_eigen(K, rel_tol, 0, 0, threads));
    }
    SEXP out = R_NilValue;
    if (!Rf_isNull(e))
        out = rff_list2("values", VECTOR_ELT(e, 0), "left", VECTOR_ELT(e, 1));
    UNPROTECT(1);
    return out;
}

/* All eigenvalues (ascending) and eigenvectors of the symmetric matrix A
   (upper triangle used, as by dsyevr, which solves it when a step of
   sym_eigen() fails), on `threads` cores. */
SEXP rff_ridge_eigen(SEXP A, SEXP threads_)
{
    rff_check_real_matrix(A, "A");
    int D = Rf_nrows(A), m = 0, info = 0, lwork = -1, liwork = -1, iwq = 0;
    if (Rf_ncols(A) != D) Rf_error("`A` must be square");
    int threads = rff_threads(threads_);
    rff_check_finite(REAL(A), (R_xlen_t) D * D, "A");
    /* the upper triangle, mirrored into sym_eigen()'s copy */
    SEXP fast = PROTECT(sym_eigen(A, 0, 1, 1, threads));
    if (!Rf_isNull(fast)) {
        UNPROTECT(1);
        return fast;
    }
    UNPROTECT(1);
    int nprotect = 0;
    SEXP values = PROTECT(Rf_allocVector(REALSXP, D)); nprotect++;
    SEXP vectors = PROTECT(Rf_allocMatrix(REALSXP, D, D)); nprotect++;
    double *a = (double *) R_alloc((size_t) D * D, sizeof(double));
    memcpy(a, REAL(A), sizeof(double) * (size_t) D * D);
    int *isuppz = (int *) R_alloc(2 * (size_t) D, sizeof(int));
    double vl = 0, vu = 0, abstol = 0, wq = 0;
    int il = 0, iu = 0;
    F77_CALL(dsyevr)("V", "A", "U", &D, a, &D, &vl, &vu, &il, &iu, &abstol, &m,
                     REAL(values), REAL(vectors), &D, isuppz, &wq, &lwork,
                     &iwq, &liwork, &info FCONE FCONE FCONE);
    if (info != 0) Rf_error("dsyevr workspace query failed (info = %d)", info);
    lwork = (int) wq;
    liwork = iwq;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));
    int *iwork = (int *) R_alloc((size_t) liwork, sizeof(int));
    F77_CALL(dsyevr)("V", "A", "U", &D, a, &D, &vl, &vu, &il, &iu, &abstol, &m,
                     REAL(values), REAL(vectors), &D, isuppz, work, &lwork,
                     iwork, &liwork, &info FCONE FCONE FCONE);
    if (info != 0) Rf_error("the eigendecomposition failed (dsyevr info = %d)", info);
    /* all D were asked for; fewer would leave values and vectors unset */
    if (m != D)
        Rf_error("the eigendecomposition found %d of %d eigenvalues", m, D);
    SEXP out = rff_list2("values", values, "vectors", vectors);
    UNPROTECT(nprotect);
    return out;
}
