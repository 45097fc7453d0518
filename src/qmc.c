/* Randomized quasi-Monte Carlo frequencies (Avron et al., 2016): a scrambled
   and randomly shifted Halton sequence pushed through the inverse CDF of the
   spectral measure. */
#include "rff.h"
#include <float.h>

/* Coordinates of a randomized Halton sequence in s dimensions: dimension k
   uses the k-th prime b as base, a random linear scrambling of its digits,
   a -> (h a + g) mod b with h in 1..b-1 and g in 0..b-1 (a permutation of
   the digits since b is prime, applied at every digit position including
   the trailing zeros), and a shift modulo 1 (Cranley-Patterson rotation).
   The shift makes every point uniform on the unit cube, so estimates built
   on it are unbiased; the scrambling breaks the correlations of plain
   Halton between dimensions with large bases. Memory is O(s) whatever the
   bases. */
typedef struct {
    int s;
    int *base;
    int *mult, *add;  /* NULL: no scrambling (plain Halton) */
    double *shift;    /* NULL: no shift */
} halton_seq;

/* First s primes by trial division (s is at most a few thousand). */
static void first_primes(int s, int *out)
{
    int found = 0;
    for (int c = 2; found < s; c++) {
        int prime = 1;
        for (int i = 0; i < found && out[i] * out[i] <= c; i++)
            if (c % out[i] == 0) { prime = 0; break; }
        if (prime) out[found++] = c;
    }
}

/* A uniform integer in 0..n-1 from one uniform draw. */
static int unif_index(int n)
{
    int r = (int) (unif_rand() * n);
    return r < n ? r : n - 1;
}

/* Draws, with R's RNG: s shifts, then for each dimension its multiplier h
   and offset g (two uniforms). */
static void halton_init(halton_seq *h, int s, int randomize)
{
    h->s = s;
    h->base = (int *) R_alloc((size_t) s, sizeof(int));
    first_primes(s, h->base);
    h->mult = h->add = NULL;
    h->shift = NULL;
    if (!randomize) return;
    h->shift = (double *) R_alloc((size_t) s, sizeof(double));
    for (int k = 0; k < s; k++) h->shift[k] = unif_rand();
    h->mult = (int *) R_alloc((size_t) s, sizeof(int));
    h->add = (int *) R_alloc((size_t) s, sizeof(int));
    for (int k = 0; k < s; k++) {
        int b = h->base[k];
        h->mult[k] = 1 + unif_index(b - 1);
        h->add[k] = unif_index(b);
    }
}

/* Coordinate k of point i (i = 0, 1, ...), in [0, 1). */
static double halton_coord(const halton_seq *h, R_xlen_t i, int k)
{
    int b = h->base[k];
    int scrambled = h->mult != NULL;
    long long hm = scrambled ? h->mult[k] : 1, g = scrambled ? h->add[k] : 0;
    double f = 1.0 / b, x = 0.0;
    R_xlen_t idx = i;
    /* digits until they no longer change a double: f < 2^-54 */
    while (f > 5.5e-17 && (idx > 0 || scrambled)) {
        long long digit = (long long) (idx % b);
        idx /= b;
        x += (double) ((hm * digit + g) % b) * f;
        f /= b;
    }
    if (h->shift) {
        x += h->shift[k];
        if (x >= 1.0) x -= 1.0;
    }
    if (x >= 1.0) x = 1.0 - DBL_EPSILON / 2;
    return x;
}

/* Keeps a coordinate strictly inside (0, 1) for the inverse CDFs. */
static double open_unit(double u)
{
    if (u <= 0.0) return DBL_MIN;
    if (u >= 1.0) return 1.0 - DBL_EPSILON / 2;
    return u;
}

/* Fills omega (d x m, unit lengthscale) from points 0..m-1 of a randomized
   Halton sequence in d + qmc_extra dimensions, plus one more for the phases
   of variant "phase" (b_j = 2 pi u_j). */
void rff_draw_qmc(const rff_spec *spec, double *omega, double *phase)
{
    int d = spec->d, extra = spec->kernel->qmc_extra;
    int with_phase = spec->variant == RFF_VARIANT_PHASE;
    int s = d + extra + with_phase;
    /* release the work space at the end: callers may draw many maps in one
       .Call */
    const void *vmax = vmaxget();
    halton_seq h;
    halton_init(&h, s, 1);
    double *u = (double *) R_alloc((size_t) s, sizeof(double));
    for (int j = 0; j < spec->m; j++) {
        for (int k = 0; k < s; k++) u[k] = open_unit(halton_coord(&h, j, k));
        spec->kernel->quantile(d, spec->nu, u, omega + (R_xlen_t) j * d);
        if (with_phase) phase[j] = 2.0 * M_PI * halton_coord(&h, j, s - 1);
        if (j % 8192 == 8191) rff_check_interrupt();
    }
    vmaxset(vmax);
}

/* n points of the Halton sequence in s dimensions (n x s), randomized
   (scrambled and shifted, drawn from R's RNG) or plain. */
SEXP rff_halton(SEXP n_, SEXP s_, SEXP randomize_)
{
    int n = rff_as_int(n_, "n", 0), s = rff_as_int(s_, "s", 1);
    if (s > 100000) Rf_error("`s` must be at most 100000");
    int randomize = Rf_asLogical(randomize_);
    if (randomize == NA_LOGICAL) Rf_error("`randomize` must be TRUE or FALSE");
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, n, s));
    halton_seq h;
    GetRNGstate();
    halton_init(&h, s, randomize);
    PutRNGstate();
    double *po = REAL(out);
    for (int k = 0; k < s; k++)
        for (int i = 0; i < n; i++) po[i + (R_xlen_t) k * n] = halton_coord(&h, i, k);
    UNPROTECT(1);
    return out;
}
