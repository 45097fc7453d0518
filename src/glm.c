/* Generalized linear models on random features (binomial, Poisson and
   multinomial): one pass over the rows gives, at coefficients (B, a), the
   weighted negative log-likelihood, its gradient and, if asked, the linear
   predictor. The rows are featurized chunk by chunk by rff_featurize() (or
   read from a cached feature matrix), so the n x D matrix is never needed.
   The optimizer that calls it lives in R (R/glm-lbfgs.R), or in lbfgs.c
   for problems in the span of the rows. */
#include "rff.h"

enum { GLM_BINOMIAL = 0, GLM_POISSON = 1, GLM_MULTINOMIAL = 2 };

/* The loss w * l(eta) of one row and its residuals r = w * (mu - y), the
   gradient of w * l with respect to eta (k columns of eta and r, stride ld).
   Binomial: l = log(1 + e^eta) - y eta; Poisson: l = e^eta - y eta;
   multinomial: l = log(sum_k e^eta_k) - eta_y. */
double rff_glm_row(int family, double yi, int cls, double w, const double *eta,
                   double *r, R_xlen_t ld, int K)
{
    if (family == GLM_BINOMIAL) {
        double e = eta[0];
        double p = e >= 0 ? 1.0 / (1.0 + exp(-e)) : exp(e) / (1.0 + exp(e));
        r[0] = w * (p - yi);
        /* Rmath's log1pexp(), in R's API from R 4.1.0 */
        return w * (log1pexp(e) - yi * e);
    }
    if (family == GLM_POISSON) {
        double mu = exp(eta[0]);
        r[0] = w * (mu - yi);
        return w * (mu - yi * eta[0]);
    }
    double m = eta[0];
    for (int k = 1; k < K; k++)
        if (eta[k * ld] > m) m = eta[k * ld];
    /* each class's e^(eta - max) once: kept in r until the sum is known */
    double s = 0;
    for (int k = 0; k < K; k++) {
        double e = exp(eta[k * ld] - m);
        r[k * ld] = e;
        s += e;
    }
    double lse = m + log(s), ws = w / s;
    for (int k = 0; k < K; k++) r[k * ld] = r[k * ld] * ws - (k == cls ? w : 0.0);
    return w * (lse - eta[cls * ld]);
}

/* The fused pass: each block of RFF_BLOCK_ROWS rows is featurized (or
   read from the cached features), multiplied by B and turned into its
   loss, residuals and gradient while it is in the cache, on rff's threads
   (rff_for_blocks). Each block writes its own partial sums, which are added
   in block order, so results do not depend on the number of threads. */
typedef struct {
    const rff_fmap *map;
    const double *x;          /* n x d inputs, featurized block by block */
    const double *Z;          /* or features: row i at Z + i - zrow0, stride ldZ */
    int ldZ, zrow0;
    int n, D, K, family, row0;
    const double *B, *a, *off, *y, *w;
    const int *cls;
    double *zbuf, *ebuf, *rbuf;   /* per thread */
    double *Gb, *g0b, *lossb;     /* per block of the chunk */
    double *eta_out;              /* n x K or NULL */
} glm_ctx;

static int thread_index(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static void glm_block(void *ctx_, int r0, int nr)
{
    const glm_ctx *c = ctx_;
    const int D = c->D, K = c->K, t = thread_index(), b = r0 / RFF_BLOCK_ROWS;
    const R_xlen_t row = (R_xlen_t) c->row0 + r0;
    const double *z;
    int ldz;
    if (c->Z) {
        z = c->Z + (row - c->zrow0);
        ldz = c->ldZ;
    } else {
        double *zb = c->zbuf + (size_t) t * RFF_BLOCK_ROWS * D;
        rff_featurize_rows(c->map, c->x + row, c->n, nr, zb, RFF_BLOCK_ROWS);
        z = zb;
        ldz = RFF_BLOCK_ROWS;
    }
    double *E = c->ebuf + (size_t) t * RFF_BLOCK_ROWS * K;
    double *R = c->rbuf + (size_t) t * RFF_BLOCK_ROWS * K;
    int ld = RFF_BLOCK_ROWS;
    rff_dgemm_seq("N", "N", nr, K, D, z, ldz, c->B, D, 0.0, E, ld);
    double loss = 0;
    for (int i = 0; i < nr; i++) {
        R_xlen_t r = row + i;
        for (int k = 0; k < K; k++) {
            double e = E[i + k * ld] + c->a[k];
            if (c->off) e += c->off[r + (R_xlen_t) k * c->n];
            E[i + k * ld] = e;
            if (c->eta_out) c->eta_out[r + (R_xlen_t) k * c->n] = e;
        }
        double w = c->w ? c->w[r] : 1.0;
        if (w == 0) {
            for (int k = 0; k < K; k++) R[i + k * ld] = 0;
            continue;
        }
        loss += rff_glm_row(c->family, c->y ? c->y[r] : 0, c->cls ? c->cls[r] - 1 : 0, w,
                        E + i, R + i, ld, K);
    }
    c->lossb[b] = loss;
    for (int k = 0; k < K; k++) {
        double s = 0;
        for (int i = 0; i < nr; i++) s += R[i + k * ld];
        c->g0b[(size_t) b * K + k] = s;
    }
    rff_dgemm_seq("T", "N", D, K, nr, z, ldz, R, ld, 0.0, c->Gb + (size_t) b * D * K, D);
}

/* Blocks per chunk of the fused pass: the partial sums of a chunk are held
   at once (GLM_FUSED_BLOCKS * D * K doubles). */
#define GLM_FUSED_BLOCKS 64

static void glm_alloc(glm_ctx *c, int threads, int featurize)
{
    const int D = c->D, K = c->K;
    c->zbuf = featurize ? (double *) R_alloc((size_t) threads * RFF_BLOCK_ROWS * D, sizeof(double))
                        : NULL;
    c->ebuf = (double *) R_alloc((size_t) threads * RFF_BLOCK_ROWS * K, sizeof(double));
    c->rbuf = (double *) R_alloc((size_t) threads * RFF_BLOCK_ROWS * K, sizeof(double));
    c->Gb = (double *) R_alloc((size_t) GLM_FUSED_BLOCKS * D * K, sizeof(double));
    c->g0b = (double *) R_alloc((size_t) GLM_FUSED_BLOCKS * K, sizeof(double));
    c->lossb = (double *) R_alloc(GLM_FUSED_BLOCKS, sizeof(double));
}

/* Rows [from, to): the loss, and the gradient added to G and g0. */
static double glm_rows(glm_ctx *c, int from, int to, int threads, double *G, double *g0)
{
    const int D = c->D, K = c->K;
    const int chunk = GLM_FUSED_BLOCKS * RFF_BLOCK_ROWS;
    double loss = 0;
    for (int r0 = from; r0 < to; r0 += chunk) {
        int nr = to - r0 < chunk ? to - r0 : chunk;
        int nb = (nr + RFF_BLOCK_ROWS - 1) / RFF_BLOCK_ROWS;
        c->row0 = r0;
        rff_for_blocks(nr, D, threads, glm_block, c);
        for (int b = 0; b < nb; b++) {
            loss += c->lossb[b];
            const double *gb = c->Gb + (size_t) b * D * K;
            for (size_t j = 0; j < (size_t) D * K; j++) G[j] += gb[j];
            for (int k = 0; k < K; k++) g0[k] += c->g0b[(size_t) b * K + k];
        }
    }
    return loss;
}

/* One pass over the n rows of x (n x d, featurized through `map`) or of the
   cached features Zcache (n x D; then x is not used): the loss sum_i w_i l_i,
   its gradient with respect to B (D x K) and to the intercepts a (K), and,
   with want_eta, the linear predictor z_i'B + a + offset_i (n x K). y is a
   double vector (0/1 or counts) or, for the multinomial family, integer
   class codes 1..K; offset NULL or n x K; weights NULL or n numbers >= 0. */
SEXP rff_glm_pass(SEXP x, SEXP Zcache, SEXP map, SEXP y, SEXP family_,
                  SEXP offset, SEXP weights, SEXP coef, SEXP intercept,
                  SEXP chunk_size, SEXP threads_, SEXP want_eta_)
{
    static const char *const families[] = {"binomial", "poisson", "multinomial", NULL};
    int family = rff_string_code(family_, "family", families);
    rff_fmap fm;
    /* x is not used (nor checked) with cached features */
    int threads = rff_featurize_args(Zcache == R_NilValue ? x : R_NilValue, map,
                                     threads_, &fm);
    int want_eta = Rf_asLogical(want_eta_) == TRUE;
    rff_check_real_matrix(coef, "coef");
    int D = fm.D, K = Rf_ncols(coef);
    if (Rf_nrows(coef) != D) Rf_error("`coef` must have %d rows", D);
    if (K < 1 || (family != GLM_MULTINOMIAL && K != 1))
        Rf_error("`coef` must have one column, or one per class");
    if (!Rf_isReal(intercept) || XLENGTH(intercept) != K)
        Rf_error("`intercept` must be %d numbers", K);
    int n;
    const double *px = NULL, *pz = NULL;
    if (Zcache != R_NilValue) {
        rff_check_real_matrix(Zcache, "Z");
        if (Rf_ncols(Zcache) != D) Rf_error("`Z` must have %d columns", D);
        n = Rf_nrows(Zcache);
        pz = REAL(Zcache);
    } else {
        n = Rf_nrows(x);
        px = REAL(x);
    }
    const double *py = NULL;
    const int *pc = NULL;
    if (family == GLM_MULTINOMIAL) {
        if (TYPEOF(y) != INTSXP || XLENGTH(y) != n)
            Rf_error("`y` must be %d class codes", n);
        pc = INTEGER(y);
        for (R_xlen_t i = 0; i < n; i++)
            if (pc[i] < 1 || pc[i] > K) Rf_error("`y` must be class codes 1..%d", K);
    } else {
        if (!Rf_isReal(y) || XLENGTH(y) != n) Rf_error("`y` must be %d numbers", n);
        py = REAL(y);
    }
    const double *po = NULL;
    if (offset != R_NilValue) {
        rff_check_real_matrix(offset, "offset");
        if (Rf_nrows(offset) != n || Rf_ncols(offset) != K)
            Rf_error("`offset` must be a %d x %d matrix", n, K);
        po = REAL(offset);
    }
    const double *pw = rff_weights_ptr(weights, n);
    int cs = rff_as_int(chunk_size, "chunk_size", 1);
    if (cs > n) cs = n > 0 ? n : 1;
    if ((double) cs * D > INT_MAX) Rf_error("`chunk_size` * D is too large");

    int nprotect = 0;
    SEXP grad = PROTECT(Rf_allocMatrix(REALSXP, D, K)); nprotect++;
    SEXP grad0 = PROTECT(Rf_allocVector(REALSXP, K)); nprotect++;
    SEXP eta_out = R_NilValue;
    if (want_eta) {
        eta_out = PROTECT(Rf_allocMatrix(REALSXP, n, K)); nprotect++;
    }
    double *G = REAL(grad), *g0 = REAL(grad0);
    memset(G, 0, sizeof(double) * (size_t) D * K);
    memset(g0, 0, sizeof(double) * K);
    glm_ctx c = {.map = &fm, .x = px, .Z = pz, .ldZ = n, .zrow0 = 0, .n = n,
                 .D = D, .K = K, .family = family, .row0 = 0, .B = REAL(coef),
                 .a = REAL(intercept), .off = po, .y = py, .w = pw, .cls = pc,
                 .eta_out = want_eta ? REAL(eta_out) : NULL};
    double loss = 0;
    if (pz || rff_fmap_blockwise(&fm)) {
        glm_alloc(&c, threads, pz == NULL);
        loss = glm_rows(&c, 0, n, threads, G, g0);
    } else {
        /* maps that need a workspace (Nystrom, TensorSketch, kernels
           evaluated by R): chunks featurized by rff_featurize() */
        glm_alloc(&c, threads, 0);
        double *zbuf = (double *) R_alloc((size_t) cs * D, sizeof(double));
        c.Z = zbuf;
        c.ldZ = cs;
        for (int r0 = 0; r0 < n; r0 += cs) {
            int nr = n - r0 < cs ? n - r0 : cs;
            rff_featurize(&fm, px + r0, n, nr, zbuf, cs, threads);
            c.zrow0 = r0;
            loss += glm_rows(&c, r0, r0 + nr, threads, G, g0);
        }
    }
    const char *nms[] = {"loss", "grad", "grad0", "eta", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms)); nprotect++;
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(loss));
    SET_VECTOR_ELT(out, 1, grad);
    SET_VECTOR_ELT(out, 2, grad0);
    SET_VECTOR_ELT(out, 3, eta_out);
    UNPROTECT(nprotect);
    return out;
}
