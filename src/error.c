/* Kernel-approximation error: replicated comparisons of Z_x Z_y' with the
   exact kernel, one random map at a time. */
#include "rff.h"

/* Columns of the per-replicate summary matrix, in the order R names them. */
enum { ERR_MAX_ABS, ERR_MEAN_ABS, ERR_RMSE, ERR_REL_FRO, ERR_REL_SPEC, ERR_NCOL };

/* Workspace of LAPACK dsyevr for the eigenvalues (only) of n x n matrices. */
typedef struct {
    int n, lwork, liwork;
    double *a, *w, *work;
    int *iwork, *isuppz;
} sym_norm_ws;

static void sym_norm_ws_init(sym_norm_ws *ws, int n)
{
    ws->n = n;
    ws->a = (double *) R_alloc((size_t) n * n, sizeof(double));
    ws->w = (double *) R_alloc((size_t) n, sizeof(double));
    ws->isuppz = (int *) R_alloc(2 * (size_t) n, sizeof(int));
    double wq, vl = 0.0, vu = 0.0, abstol = 0.0, zdummy = 0.0;
    int iq, il = 1, iu = n, nfound, ldz = 1, info, query = -1;
    F77_CALL(dsyevr)("N", "A", "L", &n, ws->a, &n, &vl, &vu, &il, &iu, &abstol,
                     &nfound, ws->w, &zdummy, &ldz, ws->isuppz, &wq, &query,
                     &iq, &query, &info FCONE FCONE FCONE);
    if (info != 0) Rf_error("LAPACK dsyevr workspace query failed (info = %d)", info);
    ws->lwork = (int) wq;
    ws->liwork = iq;
    ws->work = (double *) R_alloc((size_t) ws->lwork, sizeof(double));
    ws->iwork = (int *) R_alloc((size_t) ws->liwork, sizeof(int));
}

/* Spectral norm (largest |eigenvalue|) of the symmetric matrix whose lower
   triangle is that of src (leading dimension n); src may be ws->a, which
   dsyevr overwrites, and is otherwise left unchanged. */
static double sym_spectral_norm(sym_norm_ws *ws, const double *src)
{
    int n = ws->n;
    rff_check_finite(src, (R_xlen_t) n * n, "the kernel or error matrix");
    if (src != ws->a) memcpy(ws->a, src, (size_t) n * n * sizeof(double));
    double vl = 0.0, vu = 0.0, abstol = 0.0, zdummy = 0.0;
    int il = 1, iu = n, nfound, ldz = 1, info;
    F77_CALL(dsyevr)("N", "A", "L", &n, ws->a, &n, &vl, &vu, &il, &iu, &abstol,
                     &nfound, ws->w, &zdummy, &ldz, ws->isuppz, ws->work,
                     &ws->lwork, ws->iwork, &ws->liwork, &info FCONE FCONE FCONE);
    if (info != 0) Rf_error("LAPACK dsyevr failed (info = %d)", info);
    if (nfound != n)
        Rf_error("LAPACK dsyevr found %d of %d eigenvalues", nfound, n);
    /* eigenvalues come in ascending order */
    double lo = fabs(ws->w[0]), hi = fabs(ws->w[n - 1]);
    return lo > hi ? lo : hi;
}

/* The n x n (or n x m) product of a replicate is formed in panels of this
   many columns with an interrupt check after each: one product of 4000
   rows and 2000 features takes tens of seconds on the reference BLAS. */
#define ERR_PANEL_COLS 256

/* The upper triangle of zx zx' (zx n x D) into est (n x n), panel by panel:
   the diagonal block by dsyrk, the block above it by dgemm. */
static void gram_upper_panels(const double *zx, int n, int D, double *est, int threads)
{
    for (int c0 = 0; c0 < n; c0 += ERR_PANEL_COLS) {
        int w = n - c0 < ERR_PANEL_COLS ? n - c0 : ERR_PANEL_COLS;
        double *col = est + (R_xlen_t) c0 * n;
        rff_dsyrk_threads("N", w, D, zx + c0, n, 0.0, col + c0, n, threads);
        if (c0 > 0)
            rff_dgemm_threads("N", "T", c0, w, D, zx, n, zx + c0, n, 0.0, col, n,
                              threads);
        rff_check_interrupt();
    }
}

/* Up to this many rows of y, Z_x Z_y' is formed block by block right after
   each block of Z_x is featurized, by the thread that featurized it, while
   the block is still in cache (a matrix-vector product is bound by reading
   Z_x); more rows of y go to one dgemm. */
#define ERR_SMALL_M 8

typedef struct {
    const rff_fmap *map;
    const double *x, *zy;
    double *zx, *est;
    int n, m;
} est_block_ctx;

/* est[r0 + i, c] = z(x_{r0 + i})' z(y_c) for a block of rows: in one pass
   without storing the features where the fused kernel applies (zx is NULL
   then), else from the block's features in zx. */
static void est_block(void *ctx_, int r0, int nr)
{
    const est_block_ctx *ctx = ctx_;
    const int n = ctx->n, m = ctx->m, D = ctx->map->D;
    if (ctx->zx == NULL) {
        rff_dot_rows_si(ctx->map, ctx->x + r0, n, nr, ctx->zy, m, ctx->est + r0, n);
        return;
    }
    rff_featurize_rows(ctx->map, ctx->x + r0, n, nr, ctx->zx + r0, n);
    for (int c = 0; c < m; c++) {
        double *restrict e = ctx->est + (R_xlen_t) c * n + r0;
        for (int i = 0; i < nr; i++) e[i] = 0.0;
        for (int k = 0; k < D; k++) {
            const double *restrict zk = ctx->zx + (R_xlen_t) k * n + r0;
            const double w = ctx->zy[c + (R_xlen_t) k * m];
#ifdef _OPENMP
#pragma omp simd
#endif
            for (int i = 0; i < nr; i++) e[i] += zk[i] * w;
        }
    }
}

/* Per-replicate errors of Z_x Z_y' against the exact kernel K (n x m).
   x: n x d; y: m x d, or NULL for y = x (then the estimate is symmetric and
   the relative spectral-norm error can be computed). source: an rff_map
   (used as is; reps must be 1) or a spec list (every field of an rff_map but
   omega and phase), from which reps maps are drawn one after another with
   rff_spec_draw(), the routine rff_map() draws through, so replicate r uses
   the map the r-th of reps successive rff_map() calls would draw.
   Returns list(errors = reps x ERR_NCOL matrix, estimate = n x m x reps
   array or NULL). Only one replicate's features exist at any time. */
SEXP rff_kernel_error(SEXP x, SEXP y, SEXP K, SEXP source, SEXP reps_,
                      SEXP keep_, SEXP spectral_, SEXP threads_)
{
    int nprotect = 0;
    rff_check_real_matrix(x, "x");
    int symmetric = Rf_isNull(y);
    if (!symmetric) rff_check_real_matrix(y, "y");
    int n = Rf_nrows(x), d = Rf_ncols(x), m = symmetric ? n : Rf_nrows(y);
    if (n < 1 || m < 1 || d < 1) Rf_error("`x` and `y` must have rows and columns");
    if (!symmetric && Rf_ncols(y) != d)
        Rf_error("`x` and `y` must have the same number of columns");
    rff_check_real_matrix(K, "K");
    if (Rf_nrows(K) != n || Rf_ncols(K) != m)
        Rf_error("`K` must be %d x %d", n, m);
    int reps = rff_as_int(reps_, "reps", 1);
    int keep = Rf_asLogical(keep_) == TRUE;
    int spectral = symmetric && Rf_asLogical(spectral_) == TRUE;
    int threads = rff_threads(threads_);

    rff_fmap fm;
    rff_spec spec;
    /* a fixed map is told from a spec by its class or its frequencies */
    int fixed = Rf_inherits(source, "rff_map") ||
        rff_list_elt_opt(source, "omega") != R_NilValue;
    if (fixed) {
        if (reps != 1) Rf_error("`reps` must be 1 with a fixed map");
        rff_fmap_from_list(source, &fm);
    } else {
        rff_spec_from_list(source, &spec);
        SEXP omega = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) spec.d * spec.m)); nprotect++;
        SEXP phase = R_NilValue;
        if (spec.variant == RFF_VARIANT_PHASE) {
            phase = PROTECT(Rf_allocVector(REALSXP, spec.D)); nprotect++;
        }
        rff_fmap_from_spec(&spec, REAL(omega),
                           spec.variant == RFF_VARIANT_PHASE ? REAL(phase) : NULL, &fm);
    }
    if (fm.d != d)
        Rf_error("`x` has %d columns but the map expects %d", d, fm.d);

    R_xlen_t nm = (R_xlen_t) n * m;
    if (keep && (double) nm * reps > R_XLEN_T_MAX)
        Rf_error("`keep = TRUE` needs more than the longest vector R allows");
    /* features of x are stored unless each block's products are formed
       as its features are computed */
    const int dot_fused = !symmetric && m <= ERR_SMALL_M && rff_dot_fused_ok(&fm);
    double *zx = NULL, *zy = NULL;
    if (!dot_fused) {
        SEXP zx_ = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) n * fm.D)); nprotect++;
        zx = zy = REAL(zx_);
    }
    if (!symmetric) {
        SEXP zy_ = PROTECT(Rf_allocVector(REALSXP, (R_xlen_t) m * fm.D)); nprotect++;
        zy = REAL(zy_);
    }
    SEXP errors = PROTECT(Rf_allocMatrix(REALSXP, reps, ERR_NCOL)); nprotect++;
    SEXP estimate = R_NilValue;
    double *est = NULL;
    if (keep) {
        estimate = PROTECT(Rf_alloc3DArray(REALSXP, n, m, reps)); nprotect++;
    } else {
        SEXP est_ = PROTECT(Rf_allocVector(REALSXP, nm)); nprotect++;
        est = REAL(est_);
    }

    const double *k = REAL(K), *px = REAL(x), *py = symmetric ? NULL : REAL(y);
    double kfro = 0.0;
    for (R_xlen_t i = 0; i < nm; i++) kfro += k[i] * k[i];
    kfro = sqrt(kfro);
    sym_norm_ws ws = {0};
    double knorm = NA_REAL;
    if (spectral) {
        sym_norm_ws_init(&ws, n);
        knorm = sym_spectral_norm(&ws, k);
    }

    double *err = REAL(errors);
    int D = fm.D;
    for (int r = 0; r < reps; r++) {
        if (!fixed) {
            /* the RNG state is written back before anything can be interrupted */
            GetRNGstate();
            rff_spec_draw(&spec, (double *) fm.omega, (double *) fm.phase);
            PutRNGstate();
        }
        rff_check_projections(&fm, px, n, n);
        if (!symmetric) rff_check_projections(&fm, py, m, m);
        if (keep) est = REAL(estimate) + (R_xlen_t) r * nm;
        if (symmetric) {
            rff_featurize(&fm, px, n, n, zx, n, threads);
            /* upper triangle by dsyrk, then mirrored */
            gram_upper_panels(zx, n, D, est, threads);
            rff_mirror_upper(est, n, n);
        } else if (m <= ERR_SMALL_M && rff_fmap_blockwise(&fm)) {
            rff_featurize(&fm, py, m, m, zy, m, threads);
            est_block_ctx ctx = {&fm, px, zy, zx, est, n, m};
            rff_for_blocks(n, D, threads, est_block, &ctx);
        } else {
            rff_featurize(&fm, px, n, n, zx, n, threads);
            rff_featurize(&fm, py, m, m, zy, m, threads);
            for (int c0 = 0; c0 < m; c0 += ERR_PANEL_COLS) {
                int w = m - c0 < ERR_PANEL_COLS ? m - c0 : ERR_PANEL_COLS;
                rff_dgemm_threads("N", "T", n, w, D, zx, n, zy + c0, m, 0.0,
                                  est + (R_xlen_t) c0 * n, n, threads);
                rff_check_interrupt();
            }
        }
        double max_abs = 0.0, sum_abs = 0.0, sum_sq = 0.0;
        for (R_xlen_t i = 0; i < nm; i++) {
            double e = fabs(est[i] - k[i]);
            if (e > max_abs) max_abs = e;
            sum_abs += e;
            sum_sq += e * e;
        }
        err[r + (R_xlen_t) ERR_MAX_ABS * reps] = max_abs;
        err[r + (R_xlen_t) ERR_MEAN_ABS * reps] = sum_abs / (double) nm;
        err[r + (R_xlen_t) ERR_RMSE * reps] = sqrt(sum_sq / (double) nm);
        err[r + (R_xlen_t) ERR_REL_FRO * reps] = sqrt(sum_sq) / kfro;
        double rel_spec = NA_REAL;
        if (spectral) {
            /* the error matrix goes in the dsyevr workspace's input copy */
            for (R_xlen_t i = 0; i < nm; i++) ws.a[i] = est[i] - k[i];
            rel_spec = sym_spectral_norm(&ws, ws.a) / knorm;
        }
        err[r + (R_xlen_t) ERR_REL_SPEC * reps] = rel_spec;
        rff_check_interrupt();
    }

    SEXP out = rff_list2("errors", errors, "estimate", estimate);
    UNPROTECT(nprotect);
    return out;
}
