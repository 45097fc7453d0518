/* The gradient of a criterion of ridge regression on features with respect
   to the log-lengthscales (lengthscale = "ard"), in one streamed pass over
   the rows: the derivative of the criterion with respect to each chunk of
   the feature matrix Z, contracted with dZ / dlog l_p while the chunk is
   featurized. The n x D matrix dF/dZ is never held, unless given. */
#include "rff.h"

static int ard_blas_int(double v, const char *what)
{
    if (!(v >= 0) || v > INT_MAX)
        Rf_error("%s is too large for BLAS (more than %d)", what, INT_MAX);
    return (int) v;
}

/* For a map of random frequencies omega (d x m, lengthscale applied) and
   rows x (n x d), the gradient g_p = sum_ij R_ij dZ_ij / dlog l_p of a
   criterion F whose derivative with respect to Z is R. Each frequency is
   omega0 / l, so d(omega_j'x_i) / dlog l_p = -omega_jp x_ip, and for
   "pair" dZcos_ij = Zsin_ij omega_jp x_ip, dZsin_ij = -Zcos_ij omega_jp
   x_ip; for "phase" dZ_ij = s sin(omega_j'x_i + b_j) omega_jp x_ip. So
   g_p = sum_j omega_pj (X'H)_pj with H = Rcos * Zsin - Rsin * Zcos
   ("pair") or R * S ("phase", S the sines).
   R is either given (`dz`, n x D) or made chunk by chunk from the
   criteria that depend on Z only through A = Zc'WZc and b = Zc'W yc
   (Zc = Z - 1 zbar', yc centred, W the weights): with G = dF/dA + dF/dA'
   and g = dF/db (D x q), R = W (Zc G + yc g'), since Zc'W1 = 0 makes the
   centring's own derivative vanish. Chunks run in order on the main
   thread, their products on `threads` cores through rff_dgemm_threads(),
   so results do not depend on `threads`. */
SEXP rff_ard_gradient(SEXP x, SEXP map, SEXP dz, SEXP zbar, SEXP G, SEXP g,
                      SEXP yc, SEXP weights, SEXP chunk_size, SEXP threads_)
{
    rff_fmap fm;
    int threads = rff_featurize_args(x, map, threads_, &fm);
    if (fm.features != RFF_FEATURES_FOURIER)
        rff_abort_arg("lengthscale", "`lengthscale` \"ard\" needs a map of random frequencies");
    int n = Rf_nrows(x), d = fm.d, m = fm.m, D = fm.D;
    int given = dz != R_NilValue, q = 0;
    const double *pdz = NULL, *pG = NULL, *pg = NULL, *py = NULL, *pzbar = NULL;
    if (given) {
        rff_check_real_matrix(dz, "dz");
        if (Rf_nrows(dz) != n || Rf_ncols(dz) != D)
            Rf_error("`dz` must be %d x %d", n, D);
        pdz = REAL(dz);
    } else {
        rff_check_real_matrix(G, "G");
        rff_check_real_matrix(g, "g");
        rff_check_real_matrix(yc, "yc");
        q = Rf_ncols(g);
        if (Rf_nrows(G) != D || Rf_ncols(G) != D) Rf_error("`G` must be %d x %d", D, D);
        if (Rf_nrows(g) != D) Rf_error("`g` must have %d rows", D);
        if (Rf_nrows(yc) != n || Rf_ncols(yc) != q) Rf_error("`yc` must be %d x %d", n, q);
        if (!Rf_isReal(zbar) || XLENGTH(zbar) != D) Rf_error("`zbar` must be %d numbers", D);
        pG = REAL(G);
        pg = REAL(g);
        py = REAL(yc);
        pzbar = REAL(zbar);
    }
    const double *pw = rff_weights_ptr(weights, n);
    int cs = rff_as_int(chunk_size, "chunk_size", 1);
    if (cs > n) cs = n > 0 ? n : 1;
    ard_blas_int((double) cs * D, "`chunk_size` * D");

    /* "phase": the sines s sin(omega'x + b) are the features of the phases
       b - pi/2 */
    rff_fmap fs = fm;
    if (fm.variant == RFF_VARIANT_PHASE) {
        double *ph = (double *) R_alloc((size_t) D, sizeof(double));
        for (int j = 0; j < D; j++) ph[j] = fm.phase[j] - M_PI_2;
        fs.phase = ph;
    }
    double *z = (double *) R_alloc((size_t) cs * D, sizeof(double));
    double *r = (double *) R_alloc((size_t) cs * D, sizeof(double));
    double *s = fm.variant == RFF_VARIANT_PHASE ?
        (double *) R_alloc((size_t) cs * D, sizeof(double)) : NULL;
    double *h = (double *) R_alloc((size_t) cs * m, sizeof(double));
    double *zc = given ? NULL : (double *) R_alloc((size_t) cs * D, sizeof(double));
    double *P = (double *) R_alloc((size_t) d * m, sizeof(double));
    memset(P, 0, sizeof(double) * (size_t) d * m);
    const double *px = REAL(x);

    for (int r0 = 0; r0 < n; r0 += cs) {
        int nr = n - r0 < cs ? n - r0 : cs;
        rff_featurize(&fm, px + r0, n, nr, z, cs, threads);
        if (given) {
            for (int j = 0; j < D; j++)
                memcpy(r + (R_xlen_t) j * cs, pdz + (R_xlen_t) j * n + r0,
                       sizeof(double) * (size_t) nr);
        } else {
            for (int j = 0; j < D; j++) {
                const double *zj = z + (R_xlen_t) j * cs;
                double *cj = zc + (R_xlen_t) j * cs;
                for (int i = 0; i < nr; i++) cj[i] = zj[i] - pzbar[j];
            }
            rff_dgemm_threads("N", "N", nr, D, D, zc, cs, pG, D, 0.0, r, cs, threads);
            if (q > 0)
                rff_dgemm_threads("N", "T", nr, D, q, py + r0, n, pg, D, 1.0, r, cs, threads);
            if (pw)
                for (int j = 0; j < D; j++) {
                    double *rj = r + (R_xlen_t) j * cs;
                    for (int i = 0; i < nr; i++) rj[i] *= pw[r0 + i];
                }
        }
        if (s) {
            rff_featurize(&fs, px + r0, n, nr, s, cs, threads);
            for (int j = 0; j < D; j++) {
                const double *rj = r + (R_xlen_t) j * cs, *sj = s + (R_xlen_t) j * cs;
                double *hj = h + (R_xlen_t) j * cs;
                for (int i = 0; i < nr; i++) hj[i] = rj[i] * sj[i];
            }
        } else {
            for (int j = 0; j < m; j++) {
                const double *rc = r + (R_xlen_t) j * cs, *rs = r + (R_xlen_t) (j + m) * cs;
                const double *zcos = z + (R_xlen_t) j * cs, *zsin = z + (R_xlen_t) (j + m) * cs;
                double *hj = h + (R_xlen_t) j * cs;
                for (int i = 0; i < nr; i++) hj[i] = rc[i] * zsin[i] - rs[i] * zcos[i];
            }
        }
        rff_dgemm_threads("T", "N", d, m, nr, px + r0, n, h, cs, 1.0, P, d, threads);
        rff_check_interrupt();
    }
    SEXP out = PROTECT(Rf_allocVector(REALSXP, d));
    double *po = REAL(out);
    for (int p = 0; p < d; p++) {
        double acc = 0.0;
        for (int j = 0; j < m; j++)
            acc += fm.omega[p + (R_xlen_t) j * d] * P[p + (R_xlen_t) j * d];
        po[p] = acc;
    }
    UNPROTECT(1);
    return out;
}
