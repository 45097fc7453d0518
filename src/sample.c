/* Spectral samplers: frequencies drawn with R's RNG on the main thread. */
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
    double r2 = rchisq((double) d);
    double u = rchisq(2.0 * nu);
    while (u <= 0.0) u = rchisq(2.0 * nu);
    return sqrt(r2 * 2.0 * nu / u);
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
    if (!(c > 0.0)) c = DBL_MIN;
    double s = sqrt(2.0 * nu / c);
    for (int k = 0; k < d; k++) omega[k] = s * qnorm(u[k], 0.0, 1.0, 1, 0);
}

int rff_sampler_code(SEXP sampler)
{
    /* in the order of RFF_SAMPLER_* */
    static const char *const names[] = {"iid", "orthogonal", "qmc", NULL};
    return rff_string_code(sampler, "sampler", names);
}

int rff_order_code(SEXP order)
{
    if (order == R_NilValue) return 1;
    double v = rff_as_double(order, "order");
    if (v != 0.0 && v != 1.0) Rf_error("`order` must be 0 or 1");
    return (int) v;
}

/* Reads and checks the parameters a map is drawn from. */
void rff_spec_from_list(SEXP spec, rff_spec *out)
{
    SEXP kernel = rff_list_elt(spec, "kernel");
    out->user = R_NilValue;
    if (rff_is_spectral(kernel)) {
        out->kernel = &rff_spectral_def;
        out->user = kernel;
    } else {
        out->kernel = rff_kernel_lookup(kernel);
    }
    out->d = rff_as_int(rff_list_elt(spec, "d"), "d", 1);
    out->D = rff_as_int(rff_list_elt(spec, "D"), "D", 1);
    out->variant = rff_variant_code(rff_list_elt(spec, "variant"));
    out->nu = rff_as_double(rff_list_elt(spec, "nu"), "nu");
    if (!(out->nu > 0)) Rf_error("`nu` must be positive");
    if (out->variant == RFF_VARIANT_PAIR && out->D % 2 != 0)
        Rf_error("`D` must be even for variant \"pair\"");
    out->m = out->variant == RFF_VARIANT_PAIR ? out->D / 2 : out->D;
    SEXP ls = rff_list_elt(spec, "lengthscale");
    out->lengthscale = rff_check_lengthscale(ls, out->d);
    out->n_ls = XLENGTH(ls);
    if ((double) out->d * out->m > INT_MAX)
        Rf_error("`D` is too large for `d` = %d", out->d);
    /* optional fields, so that parameter lists written before they existed
       still draw i.i.d. maps */
    SEXP sampler = rff_list_elt_opt(spec, "sampler");
    out->sampler = sampler == R_NilValue ? RFF_SAMPLER_IID : rff_sampler_code(sampler);
    out->order = rff_order_code(rff_list_elt_opt(spec, "order"));
    if (out->sampler == RFF_SAMPLER_ORTHOGONAL && out->kernel->radius == NULL)
        Rf_error("`sampler` \"orthogonal\" needs a radial kernel, not \"%s\"",
                 out->kernel->name);
    if (out->sampler == RFF_SAMPLER_QMC && out->kernel->quantile == NULL)
        Rf_error("`sampler` \"qmc\" needs a kernel with a known inverse CDF, not \"%s\"",
                 out->kernel->name);
    if (out->kernel->features == RFF_FEATURES_ARCCOS &&
        out->variant != RFF_VARIANT_PAIR)
        Rf_error("the arc-cosine kernel has no phases: `variant` must be \"pair\"");
}

/* Unit-lengthscale frequencies (d x m) of a user-defined spectral measure,
   drawn by the R function rff:::draw_spectral(), which calls the user's
   sample(m, d) and validates what it returns. R's RNG state is handed over
   to R and taken back, so the draws stay in the one stream. */
static void draw_spectral(const rff_spec *spec, double *omega)
{
    int nprotect = 0;
    PutRNGstate();
    SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("rff"))); nprotect++;
    SEXP fun = PROTECT(Rf_findFun(Rf_install("draw_spectral"), ns)); nprotect++;
    SEXP m = PROTECT(Rf_ScalarInteger(spec->m)); nprotect++;
    SEXP d = PROTECT(Rf_ScalarInteger(spec->d)); nprotect++;
    SEXP call = PROTECT(Rf_lang4(fun, spec->user, m, d)); nprotect++;
    SEXP w = PROTECT(Rf_eval(call, ns)); nprotect++;
    GetRNGstate();
    if (!Rf_isReal(w) || XLENGTH(w) != (R_xlen_t) spec->d * spec->m)
        Rf_error("the spectral sampler must return a %d x %d double matrix",
                 spec->d, spec->m);
    const double *pw = REAL(w);
    for (R_xlen_t i = 0; i < XLENGTH(w); i++) {
        if (!R_FINITE(pw[i])) Rf_error("the spectral sampler returned a non-finite value");
        omega[i] = pw[i];
    }
    UNPROTECT(nprotect);
}

/* Fills omega (d x m) and, for "phase", phase (length D). The order of the
   draws (all frequencies column by column, then all phases) is part of the
   contract: rff_map() and the replicated error study draw identical maps.
   Call between GetRNGstate() and PutRNGstate(). */
void rff_spec_draw(const rff_spec *spec, double *omega, double *phase)
{
    int d = spec->d;
    if (spec->sampler == RFF_SAMPLER_IID && spec->user == R_NilValue) {
        for (int j = 0; j < spec->m; j++) {
            double *col = omega + (R_xlen_t) j * d;
            spec->kernel->draw(d, spec->nu, col);
            for (int i = 0; i < d; i++)
                col[i] /= spec->lengthscale[spec->n_ls == 1 ? 0 : i];
        }
        if (spec->variant == RFF_VARIANT_PHASE)
            for (int j = 0; j < spec->D; j++) phase[j] = 2.0 * M_PI * unif_rand();
        return;
    }
    /* the other samplers fill unit-lengthscale frequencies, then scale */
    int phase_done = 0;
    if (spec->user != R_NilValue) {
        if (spec->sampler != RFF_SAMPLER_IID)
            Rf_error("a user-defined spectral measure supports only `sampler` \"iid\"");
        draw_spectral(spec, omega);
    } else if (spec->sampler == RFF_SAMPLER_ORTHOGONAL) {
        rff_draw_orthogonal(spec, omega);
    } else {
        rff_draw_qmc(spec, omega, phase);   /* phases are a sequence dimension */
        phase_done = 1;
    }
    for (int j = 0; j < spec->m; j++) {
        double *col = omega + (R_xlen_t) j * d;
        for (int i = 0; i < d; i++)
            col[i] /= spec->lengthscale[spec->n_ls == 1 ? 0 : i];
    }
    if (spec->variant == RFF_VARIANT_PHASE && !phase_done)
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

    SEXP out = rff_list2("omega", omega, "phase", phase);
    UNPROTECT(nprotect);
    return out;
}
