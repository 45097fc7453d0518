/* Kernels: the table (name, spectral law, exact kappa) and exact kernel
   matrices. Uses the spectral laws (spectral.c) and the helpers below them. */
#include "rff.h"

static double profile_gaussian(double s, double param)
{
    (void) param;
    return exp(-0.5 * s);
}

static double kappa_gaussian(const double *u, int d, double param)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += u[k] * u[k];
    return profile_gaussian(s, param);
}

static double profile_laplace(double s, double param)
{
    (void) param;
    return exp(-s);
}

static double kappa_laplace(const double *u, int d, double param)
{
    double s = 0.0;
    for (int k = 0; k < d; k++) s += fabs(u[k]);
    return profile_laplace(s, param);
}

/* Matern for nu >= MATERN_DEBYE_NU, from Debye's uniform asymptotic
   expansion of K_nu(nu z) (Abramowitz and Stegun 9.3.8 and 9.3.9; DLMF
   10.41.4) with six terms, written so that the large terms of
   2^(1-nu)/Gamma(nu) t^nu K_nu(t) cancel analytically: with z = t/nu,
   s = sqrt(1 + z^2), a = s - 1 and p = 1/s,
     log kappa = nu (log1p(a/2) - a) - log(s)/2 - stirling(nu)
                 + log(sum_k (-1)^k u_k(p) / nu^k),
   stirling(nu) = log Gamma(nu) - (nu - 1/2) log nu + nu - log(2 pi)/2.
   Relative error below 2e-13 at nu = 50 against R's besselK, falling as
   nu^-7; no overflow for any nu (t^nu K_nu(t) alone overflows near t = 0
   from nu of about 100 on), and as nu grows it tends to the Gaussian
   kernel exp(-r^2/2): nu (log1p(a/2) - a) -> -t^2/(4 nu) = -r^2/2. */
#define MATERN_DEBYE_NU 50.0

static double stirling_rest(double nu)
{
    double r = 1.0 / nu, r2 = r * r;
    /* 1/(12 nu) - 1/(360 nu^3) + 1/(1260 nu^5) - 1/(1680 nu^7): below
       1e-17 of truncation error from nu = 50 on */
    return r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 / 1680)));
}

static double matern_debye(double t, double nu)
{
    double z = t / nu, z2 = z * z;
    double s = sqrt(1.0 + z2), a = z2 / (1.0 + s), p = 1.0 / s;
    double p2 = p * p;
    /* u_k(p) of the expansion, Horner in p^2 */
    double u1 = p * (3.0 - 5.0 * p2) / 24.0;
    double u2 = p2 * (81.0 + p2 * (-462.0 + p2 * 385.0)) / 1152.0;
    double u3 = p * p2 * (30375.0 + p2 * (-369603.0 + p2 * (765765.0
                - p2 * 425425.0))) / 414720.0;
    double u4 = p2 * p2 * (4465125.0 + p2 * (-94121676.0 + p2 * (349922430.0
                + p2 * (-446185740.0 + p2 * 185910725.0)))) / 39813120.0;
    double u5 = p * p2 * p2 * (1519035525.0 + p2 * (-49286948607.0
                + p2 * (284499769554.0 + p2 * (-614135872350.0
                + p2 * (566098157625.0 - p2 * 188699385875.0))))) / 6688604160.0;
    double u6 = p2 * p2 * p2 * (2757049477875.0 + p2 * (-127577298354750.0
                + p2 * (1050760774457901.0 + p2 * (-3369032068261860.0
                + p2 * (5104696716244125.0 + p2 * (-3685299006138750.0
                + p2 * 1023694168371875.0)))))) / 4815794995200.0;
    double r = 1.0 / nu;
    double sum = 1.0 + r * (-u1 + r * (u2 + r * (-u3 + r * (u4
                 + r * (-u5 + r * u6)))));
    double lk = nu * (log1p(0.5 * a) - a) - 0.5 * log(s) - stirling_rest(nu)
                + log(sum);
    double v = exp(lk);
    return v > 1.0 ? 1.0 : v;
}

/* Matern-nu of r = sqrt(r2): 2^(1-nu)/Gamma(nu) t^nu K_nu(t), t = sqrt(2 nu) r. */
static double profile_matern(double r2, double nu)
{
    if (r2 == 0.0) return 1.0;
    double t = sqrt(2.0 * nu * r2);
    if (!R_FINITE(t)) return 0.0;   /* an offset beyond the doubles' range */
    if (nu == 0.5) return exp(-t);
    if (nu == 1.5) return (1.0 + t) * exp(-t);
    if (nu == 2.5) return (1.0 + t + t * t / 3.0) * exp(-t);
    if (nu >= MATERN_DEBYE_NU) return matern_debye(t, nu);
    /* bessel_k_ex with expo = 2 returns exp(t) K_nu(t); its work buffer
       needs floor(nu) + 1 < 51 doubles */
    double work[52];
    double bk = bessel_k_ex(t, nu, 2.0, work);
    double v = exp((1.0 - nu) * M_LN2 - lgammafn(nu) + nu * log(t) - t) * bk;
    /* t^nu K_nu(t) -> 2^(nu-1) Gamma(nu) as t -> 0; below nu = 50 it
       overflows only where 1 - kappa < 1e-11 */
    if (!R_FINITE(v) || v > 1.0) return 1.0;
    return v;
}

static double kappa_matern(const double *u, int d, double nu)
{
    double r2 = 0.0;
    for (int k = 0; k < d; k++) r2 += u[k] * u[k];
    return profile_matern(r2, nu);
}

/* Arc-cosine kernels of order 0 and 1 (Cho and Saul, 2009):
   k0 = 1 - theta / pi, k1 = |a| |b| (sin theta + (pi - theta) cos theta) / pi,
   theta the angle between a and b. The features vanish at 0, so does k. */
double rff_arccos_exact(const double *a, const double *b, int d, const double *par)
{
    const double order = par[0];
    double na = 0.0, nb = 0.0;
    for (int k = 0; k < d; k++) { na += a[k] * a[k]; nb += b[k] * b[k]; }
    na = sqrt(na); nb = sqrt(nb);
    if (na == 0.0 || nb == 0.0) return 0.0;
    /* theta = 2 atan2(|a/|a| - b/|b||, |a/|a| + b/|b||), accurate near 0 and pi */
    double dm = 0.0, dp = 0.0;
    for (int k = 0; k < d; k++) {
        double p = a[k] / na, q = b[k] / nb;
        dm += (p - q) * (p - q);
        dp += (p + q) * (p + q);
    }
    double theta = 2.0 * atan2(sqrt(dm), sqrt(dp));
    if (order == 0.0) return 1.0 - theta / M_PI;
    return na * nb * (sin(theta) + (M_PI - theta) * cos(theta)) / M_PI;
}

/* The polynomial kernel (a'b + offset)^degree, par = (degree, offset). */
double rff_polynomial_exact(const double *a, const double *b, int d, const double *par)
{
    double s = par[1];
    for (int k = 0; k < d; k++) s += a[k] * b[k];
    return R_pow_di(s, (int) par[0]);
}

/* kappa of a kernel that is not shift-invariant does not exist: NaN, so
   that code written for kappa shows the mistake instead of crashing. */
static double kappa_none(const double *u, int d, double param)
{
    (void) u; (void) d; (void) param;
    return R_NaN;
}

static const rff_kernel_def kernel_table[] = {
    /* name, draw, kappa, radius, quantile, qmc_extra, pair, features,
       profile, dist */
    {"gaussian", rff_draw_gaussian, kappa_gaussian, rff_radius_gaussian,
     rff_quantile_gaussian, 0, NULL, RFF_FEATURES_FOURIER, profile_gaussian, 2},
    {"laplace", rff_draw_laplace, kappa_laplace, NULL,
     rff_quantile_laplace, 0, NULL, RFF_FEATURES_FOURIER, profile_laplace, 1},
    {"matern", rff_draw_matern, kappa_matern, rff_radius_matern,
     rff_quantile_matern, 1, NULL, RFF_FEATURES_FOURIER, profile_matern, 2},
    /* frequencies N(0, I) as for the Gaussian kernel; not shift-invariant */
    {"arccos", rff_draw_gaussian, kappa_none, rff_radius_gaussian,
     rff_quantile_gaussian, 0, rff_arccos_exact, RFF_FEATURES_ARCCOS, NULL, 0},
    /* no spectral law: a TensorSketch of hashes and signs (polynomial.c) */
    {"polynomial", NULL, kappa_none, NULL, NULL, 0, rff_polynomial_exact,
     RFF_FEATURES_SKETCH, NULL, 0},
};

/* A user-defined spectral measure (an "rff_spectral" list): drawn and
   evaluated by calling its R functions, so it has no C sampler or kappa. */
const rff_kernel_def rff_spectral_def =
    {"rff_spectral", NULL, NULL, NULL, NULL, 0, NULL, RFF_FEATURES_FOURIER, NULL, 0};

int rff_is_spectral(SEXP kernel)
{
    return TYPEOF(kernel) == VECSXP && Rf_inherits(kernel, "rff_spectral");
}

const rff_kernel_def *rff_kernel_lookup(SEXP name)
{
    if (!Rf_isString(name) || XLENGTH(name) != 1 || STRING_ELT(name, 0) == NA_STRING)
        rff_abort_arg("kernel", "`kernel` must be a single string");
    const char *s = CHAR(STRING_ELT(name, 0));
    for (size_t i = 0; i < sizeof(kernel_table) / sizeof(kernel_table[0]); i++)
        if (strcmp(s, kernel_table[i].name) == 0) return &kernel_table[i];
    rff_abort_arg("kernel", "unknown kernel \"%s\"", s);
    return NULL; /* not reached */
}

/* nu, checked: positive and finite for every kernel (only the Matern kernel
   uses it), and within [RFF_NU_MIN, RFF_NU_MAX] for the Matern kernel. */
double rff_nu_value(SEXP nu_, const rff_kernel_def *k)
{
    double nu = rff_as_double(nu_, "nu");
    if (!(nu > 0)) rff_abort_arg("nu", "`nu` must be positive");
    if (k->kappa == kappa_matern && (nu < RFF_NU_MIN || nu > RFF_NU_MAX))
        rff_abort_arg("nu", "`nu` must be between %g and %g for the Matern kernel, got %g",
                      RFF_NU_MIN, RFF_NU_MAX, nu);
    return nu;
}

/* The polynomial degree: a whole number in 1..RFF_DEGREE_MAX. */
int rff_degree_value(SEXP degree)
{
    double v = rff_as_double(degree, "degree");
    if (v != floor(v) || v < 1 || v > RFF_DEGREE_MAX)
        rff_abort_arg("degree", "`degree` must be a whole number between 1 and %d",
                      RFF_DEGREE_MAX);
    return (int) v;
}

void rff_kernel_params(SEXP list, const rff_kernel_def *k, double *par)
{
    par[0] = par[1] = 0.0;
    if (k->features == RFF_FEATURES_SKETCH) {
        par[0] = (double) rff_degree_value(rff_list_elt(list, "degree"));
        par[1] = rff_as_double(rff_list_elt(list, "offset"), "offset");
        if (!(par[1] >= 0)) rff_abort_arg("offset", "`offset` must be >= 0");
    } else if (k->pair != NULL) {
        par[0] = (double) rff_order_code(rff_list_elt_opt(list, "order"));
    } else {
        par[0] = rff_nu_value(rff_list_elt(list, "nu"), k);
    }
}

static SEXP exact_kernel(SEXP x, SEXP y, const rff_kernel_def *k,
                         SEXP lengthscale, const double *par);

/* The exact kernel with the parameters read by name from a list (a map, or
   the fields kernel, lengthscale, nu and, optionally, order, degree and
   offset). */
SEXP rff_kernel_exact(SEXP x, SEXP y, SEXP spec)
{
    SEXP kernel = rff_list_elt(spec, "kernel");
    if (rff_is_spectral(kernel))
        Rf_error("a user-defined spectral kernel is evaluated in R");
    const rff_kernel_def *k = rff_kernel_lookup(kernel);
    double par[2];
    rff_kernel_params(spec, k, par);
    return exact_kernel(x, y, k, rff_list_elt(spec, "lengthscale"), par);
}

/* K[i, j] = kappa((x_i - y_j) / l), or k(x_i / l, y_j / l) for a kernel that
   is not shift-invariant: n x m, x is n x d and y is m x d. par holds nu, or
   the parameters of the kernel's pair function. */
static SEXP exact_kernel(SEXP x, SEXP y, const rff_kernel_def *k,
                         SEXP lengthscale, const double *par)
{
    rff_check_real_matrix(x, "x");
    rff_check_real_matrix(y, "y");
    int n = Rf_nrows(x), m = Rf_nrows(y), d = Rf_ncols(x);
    if (Rf_ncols(y) != d) Rf_error("`x` and `y` must have the same number of columns");
    if (d < 1) Rf_error("`x` must have at least one column");
    const double *ls = rff_check_lengthscale(lengthscale, d);
    R_xlen_t nls = XLENGTH(lengthscale);

    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, n, m));
    const double *px = REAL(x), *py = REAL(y);
    double *po = REAL(out);
    double *u = (double *) R_alloc((size_t) d, sizeof(double));
    double *v = (double *) R_alloc((size_t) d, sizeof(double));
    for (int j = 0; j < m; j++) {
        for (int i = 0; i < n; i++) {
            if (k->pair == NULL) {
                for (int c = 0; c < d; c++) {
                    R_xlen_t off = (R_xlen_t) c;
                    u[c] = (px[i + off * n] - py[j + off * m]) / ls[nls == 1 ? 0 : c];
                }
                po[i + (R_xlen_t) j * n] = k->kappa(u, d, par[0]);
            } else {
                for (int c = 0; c < d; c++) {
                    R_xlen_t off = (R_xlen_t) c;
                    double l = ls[nls == 1 ? 0 : c];
                    u[c] = px[i + off * n] / l;
                    v[c] = py[j + off * m] / l;
                }
                po[i + (R_xlen_t) j * n] = k->pair(u, v, d, par);
            }
        }
        if (j % 64 == 63) rff_check_interrupt();
    }
    UNPROTECT(1);
    return out;
}
