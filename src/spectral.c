/* Spectral laws: for each kernel's spectral measure (unit lengthscale), a
   draw of one frequency, the law of its norm (radial kernels) and its
   inverse CDF (for quasi-Monte Carlo). R's RNG, main thread only. */
#include "rff.h"
#include <float.h>

/* Gaussian kernel exp(-|u|^2/2): omega ~ N(0, I). */
void rff_draw_gaussian(int d, double param, double *omega)
{
    (void) param;
    for (int k = 0; k < d; k++) omega[k] = norm_rand();
}

/* Product Laplace kernel exp(-|u|_1): independent standard Cauchy coordinates. */
void rff_draw_laplace(int d, double param, double *omega)
{
    (void) param;
    for (int k = 0; k < d; k++) omega[k] = tan(M_PI * unif_rand());
}

/* sqrt(2 nu / u), u ~ chi^2_{2 nu}: the scale of a Matern frequency. For
   nu < 1 a chi-square draw underflows to 0 with a probability that grows
   without bound as nu -> 0, so u is drawn on the log scale, as
   2 Gamma(nu + 1) U^(1/nu) (which has the law 2 Gamma(nu)): no redraws, a
   fixed number of uniforms. The scale is capped at sqrt(2 nu / DBL_MIN)
   (about 1e154), reached with probability about exp(-708 nu), below 1e-15
   on the valid range nu >= RFF_NU_MIN. */
static double matern_scale(double nu)
{
    double logu;
    if (nu >= 1.0) {
        logu = log(rchisq(2.0 * nu));
    } else {
        double g = rchisq(2.0 * (nu + 1.0));
        logu = log(g) + log(unif_rand()) / nu;
    }
    if (logu < log(DBL_MIN)) logu = log(DBL_MIN);
    return sqrt(2.0 * nu) * exp(-0.5 * logu);
}

/* Matern-nu: multivariate t with 2 nu degrees of freedom, one chi-square
   draw shared by all coordinates of the frequency (not one per coordinate). */
void rff_draw_matern(int d, double nu, double *omega)
{
    for (int k = 0; k < d; k++) omega[k] = norm_rand();
    double s = matern_scale(nu);
    for (int k = 0; k < d; k++) omega[k] *= s;
}

/* Radial laws, for the orthogonal sampler: the norm of a unit-lengthscale
   frequency. Gaussian: chi with d degrees of freedom. */
double rff_radius_gaussian(int d, double param)
{
    (void) param;
    return sqrt(rchisq((double) d));
}

/* Matern-nu: |z| sqrt(2 nu / u), z ~ N(0, I_d), u ~ chi^2_{2 nu}. */
double rff_radius_matern(int d, double nu)
{
    double r = sqrt(rchisq((double) d));
    return r * matern_scale(nu);
}

/* Inverse CDFs of the spectral measures, for the QMC sampler: a point u of
   the open unit cube (d coordinates, plus qmc_extra) to one frequency. */
void rff_quantile_gaussian(int d, double param, const double *u, double *omega)
{
    (void) param;
    for (int k = 0; k < d; k++) omega[k] = qnorm(u[k], 0.0, 1.0, 1, 0);
}

void rff_quantile_laplace(int d, double param, const double *u, double *omega)
{
    (void) param;
    for (int k = 0; k < d; k++) omega[k] = tan(M_PI * (u[k] - 0.5));
}

/* Multivariate t: d normal quantiles and one chi-square quantile (u[d]). */
void rff_quantile_matern(int d, double nu, const double *u, double *omega)
{
    double c = qchisq(u[d], 2.0 * nu, 1, 0);
    if (!(c > DBL_MIN)) c = DBL_MIN;
    double s = sqrt(2.0 * nu / c);
    for (int k = 0; k < d; k++) omega[k] = s * qnorm(u[k], 0.0, 1.0, 1, 0);
}
