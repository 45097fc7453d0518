/* Argument and list helpers: the bottom layer, used by every other file. */
#include "rff.h"
#include <float.h>
#include <stdarg.h>

/* An error of class rff_error naming the argument `arg`, raised through the
   package's R helper rff_abort(), so C backstops read like R-level checks.
   Like Rf_error it does not return; memory from R_alloc is released. */
void rff_abort_arg(const char *arg, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("rff")));
    SEXP fun = PROTECT(Rf_findFun(Rf_install("rff_abort"), ns));
    SEXP sarg = PROTECT(Rf_mkString(arg));
    SEXP smsg = PROTECT(Rf_mkString(msg));
    SEXP call = PROTECT(Rf_lang3(fun, sarg, smsg));
    Rf_eval(call, ns);
    UNPROTECT(5);
    Rf_error("%s", msg);  /* not reached: rff_abort() signals an error */
}

/* The position of a single string s among the NULL-terminated names, the
   `what` argument's codes; an error otherwise. */
int rff_string_code(SEXP s, const char *what, const char *const *names)
{
    if (!Rf_isString(s) || XLENGTH(s) != 1 || STRING_ELT(s, 0) == NA_STRING)
        rff_abort_arg(what, "`%s` must be a single string", what);
    const char *v = CHAR(STRING_ELT(s, 0));
    for (int i = 0; names[i]; i++)
        if (strcmp(v, names[i]) == 0) return i;
    rff_abort_arg(what, "unknown %s \"%s\"", what, v);
    return -1; /* not reached */
}

int rff_variant_code(SEXP variant)
{
    /* in the order of RFF_VARIANT_* */
    static const char *const names[] = {"pair", "phase", NULL};
    return rff_string_code(variant, "variant", names);
}

int rff_sampler_code(SEXP sampler)
{
    /* in the order of RFF_SAMPLER_* */
    static const char *const names[] = {"iid", "orthogonal", "qmc", "nystrom", NULL};
    return rff_string_code(sampler, "sampler", names);
}

/* The arc-cosine order, 1 when absent. */
int rff_order_code(SEXP order)
{
    if (order == R_NilValue) return 1;
    double v = rff_as_double(order, "order");
    if (v != 0.0 && v != 1.0) rff_abort_arg("order", "`order` must be 0 or 1");
    return (int) v;
}

/* list(a = va, b = vb); va and vb protected by the caller. */
SEXP rff_list2(const char *a, SEXP va, const char *b, SEXP vb)
{
    const char *nms[] = {a, b, ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms));
    SET_VECTOR_ELT(out, 0, va);
    SET_VECTOR_ELT(out, 1, vb);
    UNPROTECT(1);
    return out;
}

/* Position of the element called name in a named list, or -1. */
static R_xlen_t list_index(SEXP list, const char *name)
{
    SEXP names = Rf_getAttrib(list, R_NamesSymbol);
    if (TYPEOF(list) != VECSXP || !Rf_isString(names)) return -1;
    for (R_xlen_t i = 0; i < XLENGTH(list); i++)
        if (strcmp(CHAR(STRING_ELT(names, i)), name) == 0) return i;
    return -1;
}

/* The element called name; an rff_error naming it when there is none. */
SEXP rff_list_elt(SEXP list, const char *name)
{
    R_xlen_t i = list_index(list, name);
    if (i < 0)
        rff_abort_arg(name, "expected a named list with element \"%s\"", name);
    return VECTOR_ELT(list, i);
}

/* The element called name, or R_NilValue when the list has none. */
SEXP rff_list_elt_opt(SEXP list, const char *name)
{
    R_xlen_t i = list_index(list, name);
    return i < 0 ? R_NilValue : VECTOR_ELT(list, i);
}

/* Row weights: NULL, or n non-negative finite doubles (checked in R first;
   this is the backstop). */
const double *rff_weights_ptr(SEXP weights, R_xlen_t n)
{
    if (weights == R_NilValue) return NULL;
    if (!Rf_isReal(weights) || XLENGTH(weights) != n)
        Rf_error("`weights` must be NULL or %lld numbers", (long long) n);
    const double *pw = REAL(weights);
    for (R_xlen_t i = 0; i < n; i++)
        if (!(pw[i] >= 0 && pw[i] <= DBL_MAX))
            Rf_error("`weights` must be non-negative and finite");
    return pw;
}
