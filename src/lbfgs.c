/* The preconditioned L-BFGS of rff_glm() at one lambda (R/glm-lbfgs.R,
   lbfgs_lambda()), in C for problems solved in the span of the rows: the
   features there are a dense n x r matrix X (r <= n) on a basis in which
   the preconditioner is diagonal, so an iteration is two products with X
   and O(n K + r K) work, which R's per-call overhead would dominate on
   small data. Or X is left on its own basis and the coefficients are
   turned instead (V th, V'g: two products of r x r by r x K a pass),
   where the passes cost less than turning X would. The iterations are
   those of the R code, step for step: the same objective, direction,
   line search, curvature pairs and stopping rule; only the rounding of
   sums may differ. */
#include "rff.h"

/* The problem and the preconditioner at one lambda. Coefficients are
   (r + 1) x K column-major, row 0 the intercepts, in inner coordinates:
   th_0k = a_k + zbar' B_k. */
typedef struct {
    const double *X;      /* n x r */
    const double *V;      /* r x r or NULL: X's coefficients are V th (the
                             features left where they lie, th in the
                             preconditioner's basis) */
    int n, r, K, family, intercept, threads;
    const double *y;      /* n (binomial, Poisson) or NULL */
    const int *cls;       /* n class codes 1..K (multinomial) or NULL */
    const double *off;    /* n x K or NULL */
    const double *w;      /* n or NULL (all 1) */
    double W, lambda;
    const double *inv_mu; /* K */
    const double *inv_den;/* r x K */
    const double *U;      /* K x K */
    const double *zbar;   /* r */
    double *eta, *R, *tmp;/* n x K, n x K, (r + 1) x K workspaces */
    double *VB;           /* r x K workspace, with V */
    double *lossb;        /* the loss of each block of RFF_BLOCK_ROWS rows */
} lb_prob;

/* eta = X B + a (+ offset) at inner coordinates th, in p->eta. */
static void lb_eta(lb_prob *p, const double *th)
{
    const int n = p->n, r = p->r, K = p->K, ld = r + 1;
    double *a = p->tmp;
    for (int k = 0; k < K; k++) {
        const double *B = th + (R_xlen_t) k * ld + 1;
        double s = 0;
        for (int j = 0; j < r; j++) s += p->zbar[j] * B[j];
        a[k] = th[(R_xlen_t) k * ld] - s;
    }
    if (p->V) {
        /* X (V B): two products of r x r by r x K a pass, where turning X
           to V would have cost n r^2 once */
        rff_dgemm_rows("N", "N", r, K, r, p->V, r, th + 1, ld, 0.0, p->VB, r, p->threads);
        rff_dgemm_rows("N", "N", n, K, r, p->X, n, p->VB, r, 0.0, p->eta, n, p->threads);
    } else {
        rff_dgemm_rows("N", "N", n, K, r, p->X, n, th + 1, ld, 0.0, p->eta, n, p->threads);
    }
    for (int k = 0; k < K; k++) {
        double *ek = p->eta + (R_xlen_t) k * n;
        const double *ok = p->off ? p->off + (R_xlen_t) k * n : NULL;
        for (int i = 0; i < n; i++) {
            double e = ek[i] + a[k];
            if (ok) e += ok[i];
            ek[i] = e;
        }
    }
}

/* The losses of rows r0..r0+nr-1 (one block) into p->lossb, their
   residuals into p->R. Runs inside rff_for_blocks()'s parallel region: no
   R API. */
static void lb_rows(void *ctx, int r0, int nr)
{
    lb_prob *p = (lb_prob *) ctx;
    const int n = p->n, K = p->K;
    double loss = 0;
    for (int i = r0; i < r0 + nr; i++) {
        double wi = p->w ? p->w[i] : 1.0;
        if (!(wi > 0)) {
            for (int k = 0; k < K; k++) p->R[i + (R_xlen_t) k * n] = 0;
            continue;
        }
        loss += rff_glm_row(p->family, p->y ? p->y[i] : 0, p->cls ? p->cls[i] - 1 : 0, wi,
                            p->eta + i, p->R + i, n, K);
    }
    p->lossb[r0 / RFF_BLOCK_ROWS] = loss;
}

/* F = loss / W + lambda / 2 |B|^2 at inner coordinates th whose eta is in
   p->eta, its gradient g in inner coordinates, and the loss. */
static double lb_from_eta(lb_prob *p, const double *th, double *g, double *loss_out)
{
    const int n = p->n, r = p->r, K = p->K, ld = r + 1;
    /* the rows' losses and residuals in blocks on rff's threads, each
       block's loss summed alone and the blocks' in order */
    rff_for_blocks(n, K, p->threads, lb_rows, p);
    double loss = 0;
    for (int b = 0; b * RFF_BLOCK_ROWS < n; b++) loss += p->lossb[b];
    /* g: rows 1..r = X'R / W + lambda B, row 0 = colSums(R) / W */
    if (p->V) {  /* V'(X'R) */
        rff_dgemm_rows("T", "N", r, K, n, p->X, n, p->R, n, 0.0, p->VB, r, p->threads);
        rff_dgemm_rows("T", "N", r, K, r, p->V, r, p->VB, r, 0.0, g + 1, ld, p->threads);
    } else {
        rff_dgemm_rows("T", "N", r, K, n, p->X, n, p->R, n, 0.0, g + 1, ld, p->threads);
    }
    double pen = 0;
    for (int k = 0; k < K; k++) {
        double *gk = g + (R_xlen_t) k * ld;
        const double *B = th + (R_xlen_t) k * ld + 1;
        double s = 0;
        for (int i = 0; i < n; i++) s += p->R[i + (R_xlen_t) k * n];
        gk[0] = p->intercept ? s / p->W : 0.0;
        for (int j = 0; j < r; j++) {
            gk[j + 1] = gk[j + 1] / p->W + p->lambda * B[j] - p->zbar[j] * gk[0];
            pen += B[j] * B[j];
        }
    }
    *loss_out = loss;
    return loss / p->W + p->lambda / 2 * pen;
}

/* The objective, gradient, eta and loss at th: one pass. */
static double lb_eval(lb_prob *p, const double *th, double *g, double *loss_out)
{
    lb_eta(p, th);
    return lb_from_eta(p, th, g, loss_out);
}

/* out = g U (`trans` 0) or g U' (1), g and out (r + 1) x K: a product
   on one core (rff's own kernel, or the BLAS). A loop over the classes
   took about 1.7 ms a preconditioner's call for 1,225 rows and 26 classes
   (the scalar multiply-adds of 2 K^2 (r + 1) terms), which every
   iteration, and every curvature pair carried over to a lambda, paid on
   the main thread while the others waited: 7% of a LetterRecognition
   fit's time. */
static void lb_rotate(const double *g, const double *U, int K, int ld, int trans, double *out)
{
    if (K == 1) {
        for (int j = 0; j < ld; j++) out[j] = g[j] * U[0];
        return;
    }
    rff_dgemm1("N", trans ? "T" : "N", ld, K, K, g, ld, U, K, 0.0, out, ld);
}

/* out = P g: rotate the classes by U, scale (1 / mu for the intercepts,
   1 / (s mu + lambda) for the features), rotate back; `work` holds
   (r + 1) x K. */
static void lb_precond(const lb_prob *p, const double *g, double *out, double *work)
{
    const int K = p->K, ld = p->r + 1;
    lb_rotate(g, p->U, K, ld, 0, work);
    for (int k = 0; k < K; k++) {
        double *wk = work + (R_xlen_t) k * ld;
        const double *den = p->inv_den + (R_xlen_t) k * p->r;
        wk[0] *= p->inv_mu[k];
        for (int j = 1; j < ld; j++) wk[j] *= den[j - 1];
    }
    lb_rotate(work, p->U, K, ld, 1, out);
}

static double dot(const double *a, const double *b, R_xlen_t m)
{
    double s = 0;
    for (R_xlen_t i = 0; i < m; i++) s += a[i] * b[i];
    return s;
}

/* A curvature pair is kept when s'y > 1e-12 |s| |y|. */
static int lb_curved(const double *s, const double *y, R_xlen_t m)
{
    return dot(s, y, m) > 1e-12 * sqrt(dot(s, s, m) * dot(y, y, m));
}

#define LB_MEM 10

/* rff_glm_lbfgs(X, y, family, offset, weights, W, th, lambda, inv_mu,
   inv_den, U, zbar, intercept, control, mem, cur, threads, V): see
   lbfgs_lambda() in R/glm-lbfgs.R; V NULL (X on the preconditioner's
   basis) or r x r (X's coefficients are V th). mem: NULL or list(S, Y, lambda) with S, Y matrices of
   (r + 1) K rows, one column a pair; cur: NULL, list(f, g, eta, loss) at
   th, or list(eta) at th (the rest is computed from eta). Returns
   list(th, f, g, eta, loss, converged, iter, passes, S, Y). */
SEXP rff_glm_lbfgs(SEXP X, SEXP y, SEXP family_, SEXP offset, SEXP weights, SEXP W_,
                   SEXP th_, SEXP lambda_, SEXP inv_mu, SEXP inv_den, SEXP U, SEXP zbar,
                   SEXP intercept, SEXP control, SEXP mem, SEXP cur, SEXP threads,
                   SEXP V)
{
    static const char *const families[] = {"binomial", "poisson", "multinomial", NULL};
    lb_prob p;
    p.family = rff_string_code(family_, "family", families);
    rff_check_real_matrix(X, "X");
    rff_check_real_matrix(th_, "th");
    p.n = Rf_nrows(X);
    p.r = Rf_ncols(X);
    p.K = Rf_ncols(th_);
    const int n = p.n, r = p.r, K = p.K, ld = r + 1;
    if (Rf_nrows(th_) != ld) Rf_error("`th` must have %d rows", ld);
    if (K < 1 || (p.family != 2 && K != 1)) Rf_error("`th` must have one column, or one per class");
    const R_xlen_t m = (R_xlen_t) ld * K;
    p.X = REAL(X);
    p.y = NULL;
    p.cls = NULL;
    if (p.family == 2) {
        if (TYPEOF(y) != INTSXP || XLENGTH(y) != n) Rf_error("`y` must be %d class codes", n);
        p.cls = INTEGER(y);
        for (int i = 0; i < n; i++)
            if (p.cls[i] < 1 || p.cls[i] > K) Rf_error("`y` must be class codes 1..%d", K);
    } else {
        if (!Rf_isReal(y) || XLENGTH(y) != n) Rf_error("`y` must be %d numbers", n);
        p.y = REAL(y);
    }
    p.off = NULL;
    if (offset != R_NilValue) {
        rff_check_real_matrix(offset, "offset");
        if (Rf_nrows(offset) != n || Rf_ncols(offset) != K)
            Rf_error("`offset` must be a %d x %d matrix", n, K);
        p.off = REAL(offset);
    }
    p.w = rff_weights_ptr(weights, n);
    p.W = Rf_asReal(W_);
    p.lambda = Rf_asReal(lambda_);
    if (!(p.W > 0) || !R_FINITE(p.W)) Rf_error("`W` must be positive");
    if (!(p.lambda >= 0) || !R_FINITE(p.lambda)) Rf_error("`lambda` must be non-negative");
    if (!Rf_isReal(inv_mu) || XLENGTH(inv_mu) != K) Rf_error("`inv_mu` must be %d numbers", K);
    if (!Rf_isReal(inv_den) || XLENGTH(inv_den) != (R_xlen_t) r * K)
        Rf_error("`inv_den` must be %d x %d", r, K);
    if (!Rf_isReal(U) || XLENGTH(U) != (R_xlen_t) K * K) Rf_error("`U` must be %d x %d", K, K);
    if (!Rf_isReal(zbar) || XLENGTH(zbar) != r) Rf_error("`zbar` must be %d numbers", r);
    p.inv_mu = REAL(inv_mu);
    p.inv_den = REAL(inv_den);
    p.U = REAL(U);
    p.zbar = REAL(zbar);
    p.V = NULL;
    if (V != R_NilValue) {
        rff_check_real_matrix(V, "V");
        if (Rf_nrows(V) != r || Rf_ncols(V) != r) Rf_error("`V` must be %d x %d", r, r);
        p.V = REAL(V);
    }
    p.intercept = Rf_asLogical(intercept) == TRUE;
    p.threads = rff_threads(threads);
    double epsilon = Rf_asReal(rff_list_elt(control, "epsilon"));
    /* the saturated model's loss (glm_floor()): the tolerance is relative
       to the deviance, F minus it */
    SEXP floor_ = rff_list_elt_opt(control, "floor");
    double fsat = floor_ == R_NilValue ? 0 : Rf_asReal(floor_);
    int maxit = Rf_asInteger(rff_list_elt(control, "maxit"));

    int nprotect = 0;
    SEXP th_out = PROTECT(Rf_duplicate(th_)); nprotect++;
    SEXP g_out = PROTECT(Rf_allocMatrix(REALSXP, ld, K)); nprotect++;
    SEXP eta_out = PROTECT(Rf_allocMatrix(REALSXP, n, K)); nprotect++;
    double *th = REAL(th_out), *g = REAL(g_out);
    p.eta = REAL(eta_out);
    p.R = (double *) R_alloc((size_t) n * K, sizeof(double));
    p.tmp = (double *) R_alloc((size_t) K, sizeof(double));
    p.VB = p.V ? (double *) R_alloc((size_t) r * K, sizeof(double)) : NULL;
    p.lossb = (double *) R_alloc((size_t) n / RFF_BLOCK_ROWS + 1, sizeof(double));
    double *work = (double *) R_alloc((size_t) m, sizeof(double));
    double *S = (double *) R_alloc((size_t) m * LB_MEM, sizeof(double));
    double *Y = (double *) R_alloc((size_t) m * LB_MEM, sizeof(double));
    double *PY = (double *) R_alloc((size_t) m * LB_MEM, sizeof(double));
    double *rho = (double *) R_alloc(LB_MEM + 1, sizeof(double));
    double *alpha = (double *) R_alloc(LB_MEM + 1, sizeof(double));
    double *Pg = (double *) R_alloc((size_t) m, sizeof(double));
    double *q = (double *) R_alloc((size_t) m, sizeof(double));
    double *d = (double *) R_alloc((size_t) m, sizeof(double));
    double *thn = (double *) R_alloc((size_t) m, sizeof(double));
    double *gn = (double *) R_alloc((size_t) m, sizeof(double));
    double *etan = (double *) R_alloc((size_t) n * K, sizeof(double));
    int k = 0;   /* pairs held */
    /* pair i (the oldest first) is in column slot[i] of S, Y and PY: the
       oldest pair leaves by a turn of the slots, not by moving the others'
       columns (three matrices of 9 pairs, every iteration) */
    int slot[LB_MEM];
    for (int i = 0; i < LB_MEM; i++) slot[i] = i;
#define PAIR(A, i) ((A) + (R_xlen_t) slot[i] * m)

    /* the pairs of the previous lambda, corrected for the change of penalty */
    if (mem != R_NilValue) {
        SEXP Sm = rff_list_elt(mem, "S"), Ym = rff_list_elt(mem, "Y");
        double dl = p.lambda - Rf_asReal(rff_list_elt(mem, "lambda"));
        if (!Rf_isReal(Sm) || !Rf_isReal(Ym) || Rf_nrows(Sm) != m || Rf_nrows(Ym) != m ||
            Rf_ncols(Sm) != Rf_ncols(Ym) || Rf_ncols(Sm) > LB_MEM)
            Rf_error("`mem` must hold matrices of %d rows", (int) m);
        int np = Rf_ncols(Sm);
        for (int i = 0; i < np; i++) {
            const double *s = REAL(Sm) + (R_xlen_t) i * m;
            double *yk = PAIR(Y, k);
            memcpy(yk, REAL(Ym) + (R_xlen_t) i * m, sizeof(double) * (size_t) m);
            for (int c = 0; c < K; c++)
                for (int j = 1; j < ld; j++) yk[j + (R_xlen_t) c * ld] += dl * s[j + (R_xlen_t) c * ld];
            if (lb_curved(s, yk, m)) {
                memcpy(PAIR(S, k), s, sizeof(double) * (size_t) m);
                lb_precond(&p, yk, PAIR(PY, k), work);
                rho[k] = 1 / dot(s, yk, m);
                k++;
            }
        }
    }

    /* the start: its objective and gradient given (`cur`), or from its
       eta alone (`cur` without `g`: half a pass), or a pass */
    double f, loss;
    if (cur != R_NilValue) {
        SEXP cg = rff_list_elt_opt(cur, "g"), ce = rff_list_elt(cur, "eta");
        if ((cg != R_NilValue && (!Rf_isReal(cg) || XLENGTH(cg) != m)) || !Rf_isReal(ce) ||
            XLENGTH(ce) != (R_xlen_t) n * K)
            Rf_error("`cur` does not match the problem");
        memcpy(p.eta, REAL(ce), sizeof(double) * (size_t) n * K);
        if (cg == R_NilValue) {
            f = lb_from_eta(&p, th, g, &loss);
        } else {
            f = Rf_asReal(rff_list_elt(cur, "f"));
            loss = Rf_asReal(rff_list_elt(cur, "loss"));
            memcpy(g, REAL(cg), sizeof(double) * (size_t) m);
        }
    } else {
        f = lb_eval(&p, th, g, &loss);
    }

    int converged = 0, iter = 0, passes = 0;
    double fold = R_PosInf;
    while (iter < maxit) {
        lb_precond(&p, g, Pg, work);
        double dec = dot(g, Pg, m) / 2;
        double tol = epsilon * (fabs(f - fsat) + 0.1);
        if (dec <= tol && fabs(fold - f) <= tol) { converged = 1; break; }
        if (dec <= 1e-3 * tol) { converged = 1; break; }
        /* two-loop recursion; P q = P g - sum alpha_i P y_i */
        memcpy(q, g, sizeof(double) * (size_t) m);
        memcpy(d, Pg, sizeof(double) * (size_t) m);
        for (int i = k - 1; i >= 0; i--) {
            alpha[i] = rho[i] * dot(PAIR(S, i), q, m);
            const double *yi = PAIR(Y, i), *pyi = PAIR(PY, i);
            for (R_xlen_t t = 0; t < m; t++) {
                q[t] -= alpha[i] * yi[t];
                d[t] -= alpha[i] * pyi[t];
            }
        }
        if (k > 0) {
            const double *sk = PAIR(S, k - 1), *yk = PAIR(Y, k - 1);
            double sc = dot(sk, yk, m) / dot(yk, PAIR(PY, k - 1), m);
            for (R_xlen_t t = 0; t < m; t++) d[t] *= sc;
        }
        for (int i = 0; i < k; i++) {
            double beta = rho[i] * dot(PAIR(Y, i), d, m);
            const double *si = PAIR(S, i);
            for (R_xlen_t t = 0; t < m; t++) d[t] += si[t] * (alpha[i] - beta);
        }
        for (R_xlen_t t = 0; t < m; t++) d[t] = -d[t];
        double gd = dot(g, d, m);
        if (!(gd < 0)) {  /* not a descent direction: restart from the preconditioner */
            k = 0;
            for (R_xlen_t t = 0; t < m; t++) d[t] = -Pg[t];
            gd = dot(g, d, m);
        }
        double step = 1, fn = 0, lossn = 0;
        int accepted = 0;
        /* the trial point's eta goes to etan; p.eta keeps the current one */
        double *eta_cur = p.eta;
        p.eta = etan;
        for (int ls = 0; ls < 40; ls++) {
            for (R_xlen_t t = 0; t < m; t++) thn[t] = th[t] + step * d[t];
            fn = lb_eval(&p, thn, gn, &lossn);
            passes++;
            if (R_FINITE(fn) && fn <= f + 1e-4 * step * gd) { accepted = 1; break; }
            step /= 2;
        }
        p.eta = eta_cur;
        iter++;
        if (!accepted) break;
        /* the pair s = step d, y = gn - g */
        double *sn = q;   /* free now */
        for (R_xlen_t t = 0; t < m; t++) {
            sn[t] = step * d[t];
            d[t] = gn[t] - g[t];
        }
        if (lb_curved(sn, d, m)) {
            if (k == LB_MEM) {
                int first = slot[0];
                memmove(slot, slot + 1, sizeof(int) * (LB_MEM - 1));
                slot[LB_MEM - 1] = first;
                memmove(rho, rho + 1, sizeof(double) * (LB_MEM - 1));
                k--;
            }
            memcpy(PAIR(S, k), sn, sizeof(double) * (size_t) m);
            memcpy(PAIR(Y, k), d, sizeof(double) * (size_t) m);
            lb_precond(&p, d, PAIR(PY, k), work);
            rho[k] = 1 / dot(sn, d, m);
            k++;
        }
        for (R_xlen_t t = 0; t < m; t++) th[t] += sn[t];
        memcpy(g, gn, sizeof(double) * (size_t) m);
        /* the trial's eta becomes the current one: the buffers change places */
        double *et = p.eta;
        p.eta = etan;
        etan = et;
        fold = f;
        f = fn;
        loss = lossn;
        rff_check_interrupt();
    }
    SEXP So = PROTECT(Rf_allocMatrix(REALSXP, (int) m, k)); nprotect++;
    SEXP Yo = PROTECT(Rf_allocMatrix(REALSXP, (int) m, k)); nprotect++;
    for (int i = 0; i < k; i++) {
        memcpy(REAL(So) + (R_xlen_t) i * m, PAIR(S, i), sizeof(double) * (size_t) m);
        memcpy(REAL(Yo) + (R_xlen_t) i * m, PAIR(Y, i), sizeof(double) * (size_t) m);
    }
#undef PAIR
    if (p.eta != REAL(eta_out)) memcpy(REAL(eta_out), p.eta, sizeof(double) * (size_t) n * K);
    const char *nms[] = {"th", "f", "g", "eta", "loss", "converged", "iter", "passes", "S",
                         "Y", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms)); nprotect++;
    SET_VECTOR_ELT(out, 0, th_out);
    SET_VECTOR_ELT(out, 1, Rf_ScalarReal(f));
    SET_VECTOR_ELT(out, 2, g_out);
    SET_VECTOR_ELT(out, 3, eta_out);
    SET_VECTOR_ELT(out, 4, Rf_ScalarReal(loss));
    SET_VECTOR_ELT(out, 5, Rf_ScalarLogical(converged));
    SET_VECTOR_ELT(out, 6, Rf_ScalarInteger(iter));
    SET_VECTOR_ELT(out, 7, Rf_ScalarInteger(passes));
    SET_VECTOR_ELT(out, 8, So);
    SET_VECTOR_ELT(out, 9, Yo);
    UNPROTECT(nprotect);
    return out;
}
