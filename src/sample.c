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

/* Reads and checks the parameters a map is drawn from. */
void rff_spec_from_list(SEXP spec, rff_spec *out)
{
    out->kernel = rff_kernel_lookup(rff_list_elt(spec, "kernel"));
    out->d = rff_as_int(rff_list_elt(spec, "d"), "d", 1);
    out->D = rff_as_int(rff_list_elt(spec, "D"), "D", 1);
    out->variant = rff_variant_code(rff_list_elt(spec, "variant"));
    out->nu = rff_as_double(rff_list_elt(spec, "nu"), "nu");
    if (!(out->nu > 0)) Rf_error("`nu` must be positive");
    if (out->variant == RFF_VARIANT_PAIR && out->D % 2 != 0)
        Rf_error("`D` must be even for variant \"pair\"");
    out->m = out->variant == RFF_VARIANT_PAIR ? out->D / 2 : out->D;
    SEXP ls = rff_list_elt(spec, "lengthscale");
    if (!Rf_isReal(ls) || (XLENGTH(ls) != 1 && XLENGTH(ls) != out->d))
        Rf_error("`lengthscale` must be a double of length 1 or d");
    out->lengthscale = REAL(ls);
    out->n_ls = XLENGTH(ls);
    for (R_xlen_t i = 0; i < out->n_ls; i++)
        if (!(R_FINITE(out->lengthscale[i]) && out->lengthscale[i] > 0))
            Rf_error("`lengthscale` must be positive and finite");
    if ((double) out->d * out->m > INT_MAX)
        Rf_error("`D` is too large for `d` = %d", out->d);
}

/* Fills omega (d x m) and, for "phase", phase (length D). The order of the
   draws (all frequencies column by column, then all phases) is part of the
   contract: rff_map() and the replicated error study draw identical maps.
   Call between GetRNGstate() and PutRNGstate(). */
void rff_spec_draw(const rff_spec *spec, double *omega, double *phase)
{
    int d = spec->d;
    for (int j = 0; j < spec->m; j++) {
        double *col = omega + (R_xlen_t) j * d;
        spec->kernel->draw(d, spec->nu, col);
        for (int i = 0; i < d; i++)
            col[i] /= spec->lengthscale[spec->n_ls == 1 ? 0 : i];
    }
    if (spec->variant == RFF_VARIANT_PHASE)
        for (int j = 0; j < spec->D; j++) phase[j] = 2.0 * M_PI * unif_rand();
}

/* list(omega, phase) drawn from the parameters in spec. */
SEXP rff_draw_map(SEXP spec_)
{
    rff_spec spec;
    rff_spec_from_list(spec_, &spec);
    int nprotect = 0;
    SEXP omega = PROTECT(Rf_allocMatrix(REALSXP, spec.d, spec.m)); nprotect++;
    SEXP phase = R_NilValue;
    if (spec.variant == RFF_VARIANT_PHASE) {
        phase = PROTECT(Rf_allocVector(REALSXP, spec.D)); nprotect++;
    }
    GetRNGstate();
    rff_spec_draw(&spec, REAL(omega),
                  spec.variant == RFF_VARIANT_PHASE ? REAL(phase) : NULL);
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
