/* Ridge regression on random features: sufficient statistics accumulated
   over row blocks (Z'Z by dsyrk, Z'y, column sums), never the n x D feature
   matrix; and the two solves, Cholesky for one lambda and a symmetric
   eigendecomposition (src/eigen.c) for a whole lambda path. */
#include "rff.h"

static int rff_blas_int(double v, const char *what)
{
    if (!(v >= 0) || v > INT_MAX)
        Rf_error("%s is too large for BLAS (more than %d)", what, INT_MAX);
    return (int) v;
}

static int chunk_rows(SEXP chunk_size, int D, R_xlen_t rows)
{
    int cs = rff_as_int(chunk_size, "chunk_size", 1);
    if (cs > rows) cs = rows > 0 ? (int) rows : 1;
    rff_blas_int((double) cs * D, "`chunk_size` * D");
    return cs;
}

/* Statistics of rows [from, to) of x (n x d) and y (n x q), y shifted by
   yshift, each row weighted by weights[i] (R_NilValue: all 1): Z'WZ (upper
   triangle, then symmetrized), Z'W(y - shift), colSums(WZ),
   colSums(W(y - shift)), colSums(W(y - shift)^2) and the sum of the
   weights. Weighted rows enter the BLAS updates as sqrt(w_i) z_i and
   sqrt(w_i) (y_i - shift). Each chunk of features is read once, by one
   rank-k update of [Z, sqrt(w), sqrt(w)(y - shift)], whose cross-product
   holds Z'WZ, colSums(WZ) and Z'W(y - shift) (two more passes over the
   chunk cost a sixth of the time with OpenBLAS); with more responses than
   features, Z'W(y - shift) is a dgemm of its own instead. */
SEXP rff_ridge_stats(SEXP x, SEXP y, SEXP yshift, SEXP weights, SEXP map,
                     SEXP rows, SEXP chunk_size, SEXP threads_)
{
    rff_fmap fm;
    int threads = rff_featurize_args(x, map, threads_, &fm);
    rff_check_real_matrix(y, "y");
    int n = Rf_nrows(x), q = Rf_ncols(y), D = fm.D;
    if (Rf_nrows(y) != n) Rf_error("`y` must have %d rows", n);
    if (!Rf_isReal(yshift) || XLENGTH(yshift) != q)
        Rf_error("`yshift` must be %d numbers", q);
    const double *pw = rff_weights_ptr(weights, n);
    if (!Rf_isReal(rows) || XLENGTH(rows) != 2)
        Rf_error("`rows` must be two numbers");
    double from_d = REAL(rows)[0], to_d = REAL(rows)[1];
    if (!(from_d >= 0 && to_d <= n && from_d <= to_d))
        Rf_error("`rows` must lie in [0, %d]", n);
    int from = (int) from_d, to = (int) to_d;
    /* the responses join the rank-k update unless they outnumber the
       features; Dt columns in all */
    const int qa = q <= D ? q : 0, Dt = D + 1 + qa;
    int cs = chunk_rows(chunk_size, Dt, to - from);

    int nprotect = 0;
    SEXP ztz = PROTECT(Rf_allocMatrix(REALSXP, D, D)); nprotect++;
    SEXP zty = PROTECT(Rf_allocMatrix(REALSXP, D, q)); nprotect++;
    SEXP zsum = PROTECT(Rf_allocVector(REALSXP, D)); nprotect++;
    SEXP ysum = PROTECT(Rf_allocVector(REALSXP, q)); nprotect++;
    SEXP yty = PROTECT(Rf_allocVector(REALSXP, q)); nprotect++;
    double *pztz = REAL(ztz), *pzty = REAL(zty), *pzs = REAL(zsum),
           *pys = REAL(ysum), *pyy = REAL(yty), wsum = 0;
    memset(pzty, 0, sizeof(double) * (size_t) D * q);
    memset(pys, 0, sizeof(double) * q);
    memset(pyy, 0, sizeof(double) * q);

    /* the cross-product of the augmented chunk, Dt x Dt (upper triangle) */
    double *S = (double *) R_alloc((size_t) Dt * Dt, sizeof(double));
    memset(S, 0, sizeof(double) * (size_t) Dt * Dt);
    double *z = (double *) R_alloc((size_t) cs * Dt, sizeof(double));
    double *sw = z + (R_xlen_t) D * cs;   /* column D: sqrt(w) or 1 */
    /* the shifted responses: in the update, or a buffer of their own */
    double *yb = qa ? sw + cs : (double *) R_alloc((size_t) cs * q, sizeof(double));
    const double *px = REAL(x), *py = REAL(y), *shift = REAL(yshift);
    for (int r0 = from; r0 < to; r0 += cs) {
        int nr = to - r0 < cs ? to - r0 : cs;
        rff_featurize(&fm, px + r0, n, nr, z, cs, threads);
        if (pw) {
            for (int i = 0; i < nr; i++) {
                sw[i] = sqrt(pw[r0 + i]);
                wsum += pw[r0 + i];
            }
            for (int j = 0; j < D; j++) {
                double *zj = z + (R_xlen_t) j * cs;
                for (int i = 0; i < nr; i++) zj[i] *= sw[i];
            }
        } else {
            for (int i = 0; i < nr; i++) sw[i] = 1.0;
            wsum += nr;
        }
        for (int k = 0; k < q; k++) {
            const double *yk = py + (R_xlen_t) k * n + r0;
            double *bk = yb + (R_xlen_t) k * cs, s = 0, ss = 0;
            for (int i = 0; i < nr; i++) {
                double v = (yk[i] - shift[k]) * sw[i];
                bk[i] = v;
                s += sw[i] * v;
                ss += v * v;
            }
            pys[k] += s;
            pyy[k] += ss;
        }
        rff_dsyrk_threads("T", Dt, nr, z, cs, 1.0, S, Dt, threads);
        if (!qa)
            rff_dgemm_threads("T", "N", D, q, nr, z, cs, yb, cs, 1.0, pzty, D,
                              threads);
        rff_check_interrupt();
    }
    for (int j = 0; j < D; j++)
        memcpy(pztz + (R_xlen_t) j * D, S + (R_xlen_t) j * Dt,
               sizeof(double) * (size_t) (j + 1));
    rff_mirror_upper(pztz, D, D);
    memcpy(pzs, S + (R_xlen_t) D * Dt, sizeof(double) * (size_t) D);
    for (int k = 0; k < qa; k++)
        memcpy(pzty + (R_xlen_t) k * D, S + (R_xlen_t) (D + 1 + k) * Dt,
               sizeof(double) * (size_t) D);

    const char *nms[] = {"ZtZ", "Zty", "zsum", "ysum", "yty", "wsum", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms)); nprotect++;
    SET_VECTOR_ELT(out, 0, ztz);
    SET_VECTOR_ELT(out, 1, zty);
    SET_VECTOR_ELT(out, 2, zsum);
    SET_VECTOR_ELT(out, 3, ysum);
    SET_VECTOR_ELT(out, 4, yty);
    SET_VECTOR_ELT(out, 5, Rf_ScalarReal(wsum));
    UNPROTECT(nprotect);
    return out;
}

/* z(x) %*% beta for all rows of x, featurized chunk by chunk. */
SEXP rff_ridge_predict(SEXP x, SEXP map, SEXP beta, SEXP chunk_size,
                       SEXP threads_)
{
    rff_fmap fm;
    int threads = rff_featurize_args(x, map, threads_, &fm);
    rff_check_real_matrix(beta, "beta");
    int n = Rf_nrows(x), D = fm.D, k = Rf_ncols(beta);
    if (Rf_nrows(beta) != D) Rf_error("`beta` must have %d rows", D);
    int cs = chunk_rows(chunk_size, D, n);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, n, k));
    double *z = (double *) R_alloc((size_t) cs * D, sizeof(double));
    for (int r0 = 0; r0 < n; r0 += cs) {
        int nr = n - r0 < cs ? n - r0 : cs;
        rff_featurize(&fm, REAL(x) + r0, n, nr, z, cs, threads);
        if (k > 0)
            rff_dgemm1("N", "N", nr, k, D, z, cs, REAL(beta), D, 0.0,
                       REAL(out) + r0, n);
        rff_check_interrupt();
    }
    UNPROTECT(1);
    return out;
}

/* One lambda: (A + nl I)^{-1} B by Cholesky (dpotrf/dpotrs), and
   trace((A + nl I)^{-1}) for the degrees of freedom (by dtrtri). info > 0 means the
   matrix is not positive definite (no coefficients). */
SEXP rff_ridge_chol(SEXP A, SEXP B, SEXP nl_)
{
    rff_check_real_matrix(A, "A");
    rff_check_real_matrix(B, "B");
    int D = Rf_nrows(A), q = Rf_ncols(B), info = 0;
    if (Rf_ncols(A) != D || Rf_nrows(B) != D)
        Rf_error("`A` must be square and `B` must have %d rows", D);
    double nl = rff_as_double(nl_, "n * lambda");
    rff_check_finite(REAL(A), (R_xlen_t) D * D, "A");
    rff_check_finite(REAL(B), (R_xlen_t) D * q, "B");
    int nprotect = 0;
    SEXP beta = PROTECT(Rf_allocMatrix(REALSXP, D, q)); nprotect++;
    double *a = (double *) R_alloc((size_t) D * D, sizeof(double));
    memcpy(a, REAL(A), sizeof(double) * (size_t) D * D);
    memcpy(REAL(beta), REAL(B), sizeof(double) * (size_t) D * q);
    for (int j = 0; j < D; j++) a[j + (R_xlen_t) j * D] += nl;
    F77_CALL(dpotrf)("U", &D, a, &D, &info FCONE);
    double trinv = NA_REAL;
    if (info == 0) {
        F77_CALL(dpotrs)("U", &D, &q, a, &D, REAL(beta), &D, &info FCONE);
        /* A + nl I = U'U, so trace of the inverse = ||U^{-1}||_F^2 */
        if (info == 0) F77_CALL(dtrtri)("U", "N", &D, a, &D, &info FCONE FCONE);
        if (info == 0) {
            trinv = 0;
            for (int j = 0; j < D; j++)
                for (int i = 0; i <= j; i++) {
                    double v = a[i + (R_xlen_t) j * D];
                    trinv += v * v;
                }
        }
    }
    const char *nms[] = {"coefficients", "trace_inv", "info", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms)); nprotect++;
    SET_VECTOR_ELT(out, 0, beta);
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal(trinv));
    SET_VECTOR_ELT(out, 2, Rf_ScalarInteger(info));
    UNPROTECT(nprotect);
    return out;
}

/* op(a) b (a' when `ta`) on `threads` cores, in fixed blocks of the
   result: of its columns (rff_dgemm_threads()), or of its rows for a b
   with few columns (rff_dgemm_rows()). */
static SEXP product(SEXP a, SEXP b, int ta, SEXP threads_, int by_rows)
{
    int threads = rff_threads(threads_);
    rff_check_real_matrix(a, "a");
    rff_check_real_matrix(b, "b");
    int m = ta ? Rf_ncols(a) : Rf_nrows(a), k = ta ? Rf_nrows(a) : Rf_ncols(a);
    int n = Rf_ncols(b);
    if (Rf_nrows(b) != k) Rf_error("`b` must have %d rows", k);
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, m, n));
    double *c = REAL(out);
    if (m > 0 && k > 0 && n > 0)
        (by_rows ? rff_dgemm_rows : rff_dgemm_threads)(ta ? "T" : "N", "N", m, n, k, REAL(a),
                                                        Rf_nrows(a), REAL(b), k, 0.0, c, m,
                                                        threads);
    else
        memset(c, 0, sizeof(double) * (size_t) m * n);
    UNPROTECT(1);
    return out;
}

/* a b in column blocks: the projections of a block of rows' features on a
   path's eigenvectors for leave-one-out. */
SEXP rff_ridge_project(SEXP a, SEXP b, SEXP threads)
{
    return product(a, b, 0, threads, 0);
}

/* op(a) b (a' when `trans`) in row blocks, for a b with few columns (a GLM
   pass's Z B and Z'R in R, the lift of a path's coefficients). */
SEXP rff_rows_product(SEXP a, SEXP b, SEXP trans, SEXP threads)
{
    if (TYPEOF(trans) != LGLSXP || XLENGTH(trans) != 1 || LOGICAL(trans)[0] == NA_LOGICAL)
        Rf_error("`trans` must be TRUE or FALSE");
    return product(a, b, LOGICAL(trans)[0], threads, 1);
}

/* The products of the path's thin eigenproblem (fewer rows than features),
   on `threads` cores shared with the BLAS as blas.c does: aa' (n x n, both
   triangles) when b is NULL, else a'b (a is n x k, b is n x m). */
SEXP rff_ridge_thin_products(SEXP a, SEXP b, SEXP threads_)
{
    int threads = rff_threads(threads_);
    rff_check_real_matrix(a, "a");
    int n = Rf_nrows(a), k = Rf_ncols(a);
    SEXP out;
    if (Rf_isNull(b)) {
        out = PROTECT(Rf_allocMatrix(REALSXP, n, n));
        double *c = REAL(out);
        if (n > 0 && k > 0) {
            rff_dsyrk_threads("N", n, k, REAL(a), n, 0.0, c, n, threads);
            rff_mirror_upper(c, n, n);
        } else {
            memset(c, 0, sizeof(double) * (size_t) n * n);
        }
    } else {
        rff_check_real_matrix(b, "b");
        if (Rf_nrows(b) != n) Rf_error("`b` must have %d rows", n);
        int m = Rf_ncols(b);
        out = PROTECT(Rf_allocMatrix(REALSXP, k, m));
        double *c = REAL(out);
        if (n > 0 && k > 0 && m > 0)
            rff_dgemm_threads("T", "N", k, m, n, REAL(a), n, REAL(b), n, 0.0, c,
                              k, threads);
        else
            memset(c, 0, sizeof(double) * (size_t) k * m);
    }
    UNPROTECT(1);
    return out;
}
