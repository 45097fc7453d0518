/* The leave-one-out errors of ridge regression over a lambda path for one
   block of rows (R/model-solve.R, loo_path()): from the rows' fitted
   values at every lambda and response, their leverages and weights, the
   sums over the rows of w ((y - f) / (1 - h))^2 for each lambda and
   response, and optionally each row's sum over the responses. The same
   arithmetic, in the same order, as the R code it replaces (the sums over
   rows in long double, as colSums() takes them), without its b x L q
   temporaries: on 5,000 rows, 26 responses and 50 lambdas those took 1.3 s
   of each lengthscale candidate. */
#include "rff.h"

/* f: b x L nr fitted values (column (j, l) = j L + l, without the means
   ybar); y: n x q responses; rows: the block's b rows of y (1-based);
   cols: the nr responses (1-based); w: b weights; h: b x L leverages
   (times the weights); ybar: NULL or the q response means; acc: NULL or a
   b x L matrix of per-row sums to add to. Returns list(sse = L nr sums,
   rows = acc plus each row's sums over the responses, or NULL). A row
   whose leverage is at least 1 - 1e-12 has an infinite error. */
SEXP rff_loo_block(SEXP f_, SEXP y_, SEXP rows_, SEXP cols_, SEXP w_, SEXP h_,
                   SEXP ybar_, SEXP acc_)
{
    rff_check_real_matrix(f_, "f");
    rff_check_real_matrix(y_, "y");
    rff_check_real_matrix(h_, "h");
    if (TYPEOF(rows_) != INTSXP || TYPEOF(cols_) != INTSXP || TYPEOF(w_) != REALSXP)
        Rf_error("`rows` and `cols` must be integer, `w` double");
    const int b = Rf_nrows(f_), n = Rf_nrows(y_), q = Rf_ncols(y_);
    const int nr = LENGTH(cols_);
    const int L = Rf_ncols(h_);
    if (LENGTH(rows_) != b || LENGTH(w_) != b || Rf_nrows(h_) != b ||
        (R_xlen_t) Rf_ncols(f_) != (R_xlen_t) L * nr)
        Rf_error("the block's dimensions do not match");
    const int *rows = INTEGER(rows_), *cols = INTEGER(cols_);
    for (int i = 0; i < b; i++)
        if (rows[i] < 1 || rows[i] > n) Rf_error("`rows` out of range");
    for (int j = 0; j < nr; j++)
        if (cols[j] < 1 || cols[j] > q) Rf_error("`cols` out of range");
    const double *ybar = NULL;
    if (!Rf_isNull(ybar_)) {
        if (TYPEOF(ybar_) != REALSXP || LENGTH(ybar_) != q)
            Rf_error("`ybar` must be NULL or %d doubles", q);
        ybar = REAL(ybar_);
    }
    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
    SEXP sse_ = Rf_allocVector(REALSXP, (R_xlen_t) L * nr);
    SET_VECTOR_ELT(out, 0, sse_);
    double *acc = NULL;
    if (!Rf_isNull(acc_)) {
        rff_check_real_matrix(acc_, "acc");
        if (Rf_nrows(acc_) != b || Rf_ncols(acc_) != L)
            Rf_error("`acc` must be %d x %d", b, L);
        SEXP a = Rf_duplicate(acc_);
        SET_VECTOR_ELT(out, 1, a);
        acc = REAL(a);
    }
    const double *f = REAL(f_), *y = REAL(y_), *w = REAL(w_), *h = REAL(h_);
    double *sse = REAL(sse_);
    for (int j = 0; j < nr; j++) {
        const double *yj = y + (R_xlen_t) (cols[j] - 1) * n;
        for (int l = 0; l < L; l++) {
            const double *fc = f + ((R_xlen_t) j * L + l) * b;
            const double *hc = h + (R_xlen_t) l * b;
            double *ac = acc ? acc + (R_xlen_t) l * b : NULL;
            long double s = 0;
            for (int i = 0; i < b; i++) {
                const double fv = ybar ? fc[i] + ybar[cols[j] - 1] : fc[i];
                double res = (yj[rows[i] - 1] - fv) / (1 - hc[i]);
                if (hc[i] >= 1 - 1e-12) res = R_PosInf;
                const double sq = w[i] * (res * res);
                s += sq;
                if (ac) ac[i] += sq;
            }
            sse[(R_xlen_t) j * L + l] = (double) s;
        }
    }
    UNPROTECT(1);
    return out;
}
