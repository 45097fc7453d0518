/* Spectral samplers: frequencies drawn with R's RNG on the main thread. */
#include "rff.h"

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

/* Matern-nu: multivariate t with 2 nu degrees of freedom, one chi-square
   draw shared by all coordinates of the frequency (not one per coordinate). */
void rff_draw_matern(int d, double nu, double *omega)
{
    for (int k = 0; k < d; k++) omega[k] = norm_rand();
    double u = rchisq(2.0 * nu);
    /* u can underflow to 0 for tiny nu; redraw rather than divide by 0 */
    while (u <= 0.0) u = rchisq(2.0 * nu);
    double s = sqrt(2.0 * nu / u);
    for (int k = 0; k < d; k++) omega[k] *= s;
}

/* Fills omega (d x m) and, for "phase", phase (length D). The order of the
   draws (all frequencies column by column, then all phases) is part of the
   contract: rff_map() and the replicated error study draw identical maps. */
void rff_draw_into(const rff_kernel_def *k, int variant, int d, int D,
                   const double *lengthscale, R_xlen_t n_ls, double nu,
                   double *omega, double *phase)
{
    int m = variant == RFF_VARIANT_PAIR ? D / 2 : D;
    for (int j = 0; j < m; j++) {
        double *col = omega + (R_xlen_t) j * d;
        k->draw(d, nu, col);
        for (int i = 0; i < d; i++)
            col[i] /= lengthscale[n_ls == 1 ? 0 : i];
    }
    if (variant == RFF_VARIANT_PHASE)
        for (int j = 0; j < D; j++) phase[j] = 2.0 * M_PI * unif_rand();
}

SEXP rff_draw_map(SEXP kernel, SEXP d_, SEXP D_, SEXP lengthscale, SEXP nu_,
                    SEXP variant_)
{
    const rff_kernel_def *k = rff_kernel_lookup(kernel);
    int d = rff_as_int(d_, "d", 1), D = rff_as_int(D_, "D", 1);
    int variant = rff_variant_code(variant_);
    double nu = rff_as_double(nu_, "nu");
    if (!(nu > 0)) Rf_error("`nu` must be positive");
    if (variant == RFF_VARIANT_PAIR && D % 2 != 0)
        Rf_error("`D` must be even for variant \"pair\"");
    if (!Rf_isReal(lengthscale) ||
        (XLENGTH(lengthscale) != 1 && XLENGTH(lengthscale) != d))
        Rf_error("`lengthscale` must be a double of length 1 or d");
    const double *ls = REAL(lengthscale);
    for (R_xlen_t i = 0; i < XLENGTH(lengthscale); i++)
        if (!(R_FINITE(ls[i]) && ls[i] > 0))
            Rf_error("`lengthscale` must be positive and finite");

    int m = variant == RFF_VARIANT_PAIR ? D / 2 : D;
    int nprotect = 0;
    SEXP omega = PROTECT(Rf_allocMatrix(REALSXP, d, m)); nprotect++;
    SEXP phase = R_NilValue;
    if (variant == RFF_VARIANT_PHASE) {
        phase = PROTECT(Rf_allocVector(REALSXP, D)); nprotect++;
    }
    GetRNGstate();
    rff_draw_into(k, variant, d, D, ls, XLENGTH(lengthscale), nu, REAL(omega),
                  variant == RFF_VARIANT_PHASE ? REAL(phase) : NULL);
    PutRNGstate();

    SEXP out = PROTECT(Rf_allocVector(VECSXP, 2)); nprotect++;
    SET_VECTOR_ELT(out, 0, omega);
    SET_VECTOR_ELT(out, 1, phase);
    SEXP names = PROTECT(Rf_allocVector(STRSXP, 2)); nprotect++;
    SET_STRING_ELT(names, 0, Rf_mkChar("omega"));
    SET_STRING_ELT(names, 1, Rf_mkChar("phase"));
    Rf_setAttrib(out, R_NamesSymbol, names);
    UNPROTECT(nprotect);
    return out;
}
