/* Map drawing: the parameters of a map read from an R list, and its
   frequencies and phases drawn by the chosen sampler (i.i.d. from the
   kernel's spectral law here; orthogonal.c and qmc.c for the others), with
   R's RNG on the main thread. */
#include "rff.h"

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
        if (out->kernel->draw == NULL)
            rff_abort_arg("kernel", "`kernel` \"%s\" has no spectral law to draw frequencies from",
                          out->kernel->name);
    }
    out->d = rff_as_int(rff_list_elt(spec, "d"), "d", 1);
    out->D = rff_as_int(rff_list_elt(spec, "D"), "D", 1);
    out->variant = rff_variant_code(rff_list_elt(spec, "variant"));
    out->nu = rff_nu_value(rff_list_elt(spec, "nu"), out->kernel);
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
    if (out->sampler == RFF_SAMPLER_NYSTROM)
        rff_abort_arg("sampler", "a Nystrom map is made from landmarks, not drawn from a spectral law");
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

/* A drawn map is checked as a given one is: frequencies divided by a tiny
   lengthscale overflow to infinity, which would make every feature NaN. */
static void check_drawn(const rff_spec *spec, const double *omega)
{
    R_xlen_t len = (R_xlen_t) spec->d * spec->m;
    for (R_xlen_t i = 0; i < len; i++)
        if (!R_FINITE(omega[i]))
            rff_abort_arg("lengthscale",
                          "`lengthscale` is too small: the frequencies (1/lengthscale "
                          "times the spectral draws) overflow to infinity");
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
        check_drawn(spec, omega);
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
    check_drawn(spec, omega);
}

/* list(omega, phase) drawn from the parameters in spec; list(hash, sign)
   for the polynomial kernel's TensorSketch. */
SEXP rff_draw_map(SEXP spec_)
{
    SEXP kernel = rff_list_elt(spec_, "kernel");
    if (!rff_is_spectral(kernel) &&
        rff_kernel_lookup(kernel)->features == RFF_FEATURES_SKETCH)
        return rff_draw_sketch(spec_);
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
