/* Map drawing for the polynomial kernel (x'y / l^2 + offset)^degree: the
   hashes and signs of a TensorSketch (Pham and Pagh, 2013), drawn with R's
   RNG on the main thread. The features are computed in tensorsketch.c. */
#include "rff.h"
#include <R_ext/Random.h>

/* list(hash, sign) for the parameters in spec (fields d, D, degree): for
   each of the `degree` factors of the tensor product, every one of the
   d + 1 input coordinates (the last one is the constant sqrt(offset)) gets
   a bucket in 0..D-1 and a sign +-1, all independent and uniform. Draw
   order: the buckets column by column ((d + 1) x degree, by R_unif_index(),
   as sample.int() draws), then the signs column by column (one uniform
   each, -1 below 1/2). */
SEXP rff_draw_sketch(SEXP spec)
{
    int d = rff_as_int(rff_list_elt(spec, "d"), "d", 1);
    int D = rff_as_int(rff_list_elt(spec, "D"), "D", 1);
    int degree = rff_degree_value(rff_list_elt(spec, "degree"));
    if (d == INT_MAX || (double) (d + 1) * degree > INT_MAX)
        rff_abort_arg("d", "`d` is too large for a sketch of degree %d", degree);
    int nprotect = 0;
    SEXP hash = PROTECT(Rf_allocMatrix(INTSXP, d + 1, degree)); nprotect++;
    SEXP sign = PROTECT(Rf_allocMatrix(REALSXP, d + 1, degree)); nprotect++;
    R_xlen_t len = (R_xlen_t) (d + 1) * degree;
    int *h = INTEGER(hash);
    double *s = REAL(sign);
    GetRNGstate();
    for (R_xlen_t i = 0; i < len; i++) h[i] = (int) R_unif_index((double) D);
    for (R_xlen_t i = 0; i < len; i++) s[i] = unif_rand() < 0.5 ? -1.0 : 1.0;
    PutRNGstate();
    SEXP out = rff_list2("hash", hash, "sign", sign);
    UNPROTECT(nprotect);
    return out;
}
