/* Routine registration, and the note of which process loaded the package. */
#include "rff.h"
#include <R_ext/Rdynload.h>

#define CALLDEF(name, n) {#name, (DL_FUNC) &name, n}

static const R_CallMethodDef CallEntries[] = {
    CALLDEF(rff_draw_map, 1),
    CALLDEF(rff_features, 3),
    CALLDEF(rff_kernel_exact, 3),
    CALLDEF(rff_halton, 3),
    CALLDEF(rff_kernel_error, 8),
    CALLDEF(rff_ridge_stats, 8),
    CALLDEF(rff_ridge_predict, 5),
    CALLDEF(rff_ridge_chol, 3),
    CALLDEF(rff_ridge_eigen, 2),
    CALLDEF(rff_gram_eigen, 4),
    CALLDEF(rff_ridge_project, 3),
    CALLDEF(rff_rows_product, 4),
    CALLDEF(rff_loo_block, 8),
    CALLDEF(rff_ridge_thin_products, 3),
    CALLDEF(rff_glm_pass, 12),
    CALLDEF(rff_glm_lbfgs, 18),
    CALLDEF(rff_ard_gradient, 10),
    CALLDEF(rff_trig, 1),
    CALLDEF(rff_runtime_info, 2),
    CALLDEF(rff_set_own_products, 1),
    CALLDEF(rff_blas_found, 0),
    CALLDEF(rff_own_product, 6),
    CALLDEF(rff_set_wide_products, 1),
    {NULL, NULL, 0}
};

void R_init_rff(DllInfo *dll)
{
    R_registerRoutines(dll, NULL, CallEntries, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
    rff_runtime_init();   /* the process id that tells a forked child */
}
