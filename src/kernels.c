/* Exact kernels and the kernel table (name, spectral sampler, kappa). */
#include "rff.h"

static double kappa_gaussian(const double *u, int d, double param)
{
    (void) param;
    double s = 0.0;
    for (int k = 0; k < d; k++) s += u[k] * u[k];
    return exp(-0.5 * s);
}

static double kappa_laplace(const double *u, int d, double param)
{
    (void) param;
    double s = 0.0;
    for (int k = 0; k < d; k++) s += fabs(u[k]);
    return exp(-s);
}

/* Matern-nu of r = |u|_2: 2^(1-nu)/Gamma(nu) t^nu K_nu(t), t = sqrt(2 nu) r. */
static double kappa_matern(const double *u, int d, double nu)
{
    double r2 = 0.0;
    for (int k = 0; k < d; k++) r2 += u[k] * u[k];
    if (r2 == 0.0) return 1.0;
    double t = sqrt(2.0 * nu * r2);
    if (nu == 0.5) return exp(-t);
    if (nu == 1.5) return (1.0 + t) * exp(-t);
    if (nu == 2.5) return (1.0 + t + t * t / 3.0) * exp(-t);
    /* bessel_k_ex with expo = 2 returns exp(t) K_nu(t); its work buffer needs
       floor(nu) + 1 doubles, kept on the stack for moderate nu */
    double small[64];
    int nb = (int) floor(nu) + 1;
    double *work = nb <= 64 ? small : (double *) R_alloc((size_t) nb, sizeof(double));
    double bk = bessel_k_ex(t, nu, 2.0, work);
    double v = exp((1.0 - nu) * M_LN2 - lgammafn(nu) + nu * log(t) - t) * bk;
    /* t^nu K_nu(t) -> 2^(nu-1) Gamma(nu) as t -> 0: overflow means kappa ~ 1 */
    if (!R_FINITE(v) || v > 1.0) return 1.0;
    return v;
}

static const rff_kernel_def kernel_table[] = {
    {"gaussian", rff_draw_gaussian, kappa_gaussian},
    {"laplace", rff_draw_laplace, kappa_laplace},
    {"matern", rff_draw_matern, kappa_matern},
};

const rff_kernel_def *rff_kernel_lookup(SEXP name)
{
    if (!Rf_isString(name) || XLENGTH(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
        Rf_error("`kernel` must be a single string");
    const char *s = CHAR(STRING_ELT(name, 0));
    for (size_t i = 0; i < sizeof(kernel_table) / sizeof(kernel_table[0]); i++)
        if (strcmp(s, kernel_table[i].name) == 0) return &kernel_table[i];
    Rf_error("unknown kernel \"%s\"", s);
    return NULL; /* not reached */
}

/* K[i, j] = kappa((x_i - y_j) / l): n x m, x is n x d and y is m x d. */
SEXP rff_kernel(SEXP x, SEXP y, SEXP kernel, SEXP lengthscale, SEXP nu_)
{
    const rff_kernel_def *k = rff_kernel_lookup(kernel);
    rff_check_real_matrix(x, "x");
    rff_check_real_matrix(y, "y");
    int n = Rf_nrows(x), m = Rf_nrows(y), d = Rf_ncols(x);
    if (Rf_ncols(y) != d) Rf_error("`x` and `y` must have the same number of columns");
    if (d < 1) Rf_error("`x` must have at least one column");
    double nu = rff_as_double(nu_, "nu");
    if (!(nu > 0)) Rf_error("`nu` must be positive");
    if (!Rf_isReal(lengthscale) ||
        (XLENGTH(lengthscale) != 1 && XLENGTH(lengthscale) != d))
        Rf_error("`lengthscale` must be a double of length 1 or d");
    R_xlen_t nls = XLENGTH(lengthscale);
    const double *ls = REAL(lengthscale);
    for (R_xlen_t i = 0; i < nls; i++)
        if (!(R_FINITE(ls[i]) && ls[i] > 0))
            Rf_error("`lengthscale` must be positive and finite");

    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, n, m));
    const double *px = REAL(x), *py = REAL(y);
    double *po = REAL(out);
    double *u = (double *) R_alloc((size_t) d, sizeof(double));
    for (int j = 0; j < m; j++) {
        for (int i = 0; i < n; i++) {
            for (int c = 0; c < d; c++) {
                R_xlen_t off = (R_xlen_t) c;
                u[c] = (px[i + off * n] - py[j + off * m]) / ls[nls == 1 ? 0 : c];
            }
            po[i + (R_xlen_t) j * n] = k->kappa(u, d, nu);
        }
        if (j % 64 == 63) R_CheckUserInterrupt();
    }
    UNPROTECT(1);
    return out;
}
