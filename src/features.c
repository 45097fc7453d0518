/* Featurization: a map read back from R, and the one blocked routine that
   the feature matrix, the ridge statistics and the kernel-error
   replications all call (the shift-invariant kernels are in fused.c, the
   TensorSketch in tensorsketch.c, the Nystrom features in nystrom.c). */
#include "rff.h"

/* Reads and re-checks an "rff_map" list; pointers stay valid while map is
   protected by the caller. */
void rff_fmap_from_list(SEXP map, rff_fmap *out)
{
    if (TYPEOF(map) != VECSXP || !Rf_isString(Rf_getAttrib(map, R_NamesSymbol)))
        rff_abort_arg("map", "`map` must be an rff_map");
    memset(out, 0, sizeof *out);
    out->user = R_NilValue;
    /* maps that are not made of frequencies */
    SEXP sampler = rff_list_elt_opt(map, "sampler");
    if (sampler != R_NilValue && rff_sampler_code(sampler) == RFF_SAMPLER_NYSTROM) {
        rff_nystrom_read(map, out);
        return;
    }
    SEXP kernel_ = rff_list_elt(map, "kernel");
    if (!rff_is_spectral(kernel_) &&
        rff_kernel_lookup(kernel_)->features == RFF_FEATURES_SKETCH) {
        rff_sketch_read(map, out);
        return;
    }
    /* phase is NULL, or absent, in a "pair" map */
    SEXP omega = rff_list_elt(map, "omega"), phase = rff_list_elt_opt(map, "phase");
    out->variant = rff_variant_code(rff_list_elt(map, "variant"));
    out->D = rff_as_int(rff_list_elt(map, "D"), "map$D", 1);
    rff_check_real_matrix(omega, "map$omega");
    out->d = Rf_nrows(omega);
    out->m = Rf_ncols(omega);
    if (out->d < 1) rff_abort_arg("map", "`map$omega` must have at least one row");
    if (out->variant == RFF_VARIANT_PAIR) {
        if (out->m * 2 != out->D || phase != R_NilValue)
            rff_abort_arg("map", "`map` is inconsistent: \"pair\" needs D/2 frequencies and no phase");
        out->phase = NULL;
    } else {
        if (out->m != out->D || !Rf_isReal(phase) || XLENGTH(phase) != out->D)
            rff_abort_arg("map", "`map` is inconsistent: \"phase\" needs D frequencies and D phases");
        out->phase = REAL(phase);
    }
    out->omega = REAL(omega);
    out->scale = sqrt(2.0 / out->D);
    /* the feature type follows the kernel; user-defined spectral kernels
       (lists) have Fourier features */
    SEXP kernel = rff_list_elt(map, "kernel");
    out->features = RFF_FEATURES_FOURIER;
    out->order = 0;
    if (!rff_is_spectral(kernel) &&
        rff_kernel_lookup(kernel)->features == RFF_FEATURES_ARCCOS) {
        out->features = RFF_FEATURES_ARCCOS;
        out->order = rff_order_code(rff_list_elt_opt(map, "order"));
        if (out->variant != RFF_VARIANT_PAIR)
            rff_abort_arg("map", "`map` is inconsistent: an arc-cosine map has variant \"pair\"");
    }
}

/* The feature map of a map drawn from spec into omega (d x m) and phase
   (length D for "phase"), as rff_fmap_from_list() would read it back. */
void rff_fmap_from_spec(const rff_spec *spec, const double *omega,
                        const double *phase, rff_fmap *out)
{
    memset(out, 0, sizeof *out);
    out->user = R_NilValue;
    out->variant = spec->variant;
    out->d = spec->d;
    out->m = spec->m;
    out->D = spec->D;
    out->omega = omega;
    out->phase = spec->variant == RFF_VARIANT_PHASE ? phase : NULL;
    out->scale = sqrt(2.0 / spec->D);
    out->features = spec->kernel->features;
    out->order = out->features == RFF_FEATURES_ARCCOS ? spec->order : 0;
}

/* Arc-cosine features in place: the projection p gives
   sqrt(2/D) step(p) p^order in column j and sqrt(2/D) step(-p) (-p)^order in
   column j + m (the antithetic direction -omega_j). */
static void arccos_features(const rff_fmap *map, int nrows, double *z, int ldz)
{
    const double s = map->scale;
    int m = map->m;
    for (int j = 0; j < m; j++) {
        double *zp = z + (R_xlen_t) j * ldz;
        double *zn = z + (R_xlen_t) (j + m) * ldz;
        for (int i = 0; i < nrows; i++) {
            double p = zp[i];
            double f = map->order == 0 ? s : s * fabs(p);
            zp[i] = p > 0.0 ? f : 0.0;
            zn[i] = p < 0.0 ? f : 0.0;
        }
    }
}

int rff_fmap_blockwise(const rff_fmap *map)
{
    return map->features == RFF_FEATURES_FOURIER || map->features == RFF_FEATURES_ARCCOS;
}

/* The calling thread's part of the map's workspace (rff_featurize()). */
static double *thread_work(const rff_fmap *map)
{
#ifdef _OPENMP
    return map->work + (size_t) omp_get_thread_num() * map->work_per_thread;
#else
    return map->work;
#endif
}

/* Features of nrows rows of x (leading dimension ldx) into z (leading
   dimension ldz). The shift-invariant maps use the fused kernels of fused.c.
   TensorSketch and Nystrom maps need the workspace that rff_featurize()
   sets up. */
void rff_featurize_rows(const rff_fmap *map, const double *x, int ldx,
                        int nrows, double *z, int ldz)
{
    if (nrows <= 0) return;
    if (map->features == RFF_FEATURES_SKETCH) {
        rff_sketch_rows(map, x, ldx, nrows, z, ldz, thread_work(map));
        return;
    }
    if (map->features == RFF_FEATURES_NYSTROM) {
        rff_nystrom_rows(map, x, ldx, nrows, z, ldz, thread_work(map));
        return;
    }
    if (map->features == RFF_FEATURES_ARCCOS) {
        rff_dgemm_seq("N", "N", nrows, map->m, map->d, x, ldx, map->omega, map->d, 0.0,
                      z, ldz);
        arccos_features(map, nrows, z, ldz);
        return;
    }
    rff_featurize_rows_si(map, x, ldx, nrows, z, ldz);
}

/* Calls fn(ctx, r0, nr) on the blocks of RFF_BLOCK_ROWS rows of 0..n-1,
   shared among threads, with D features a row. Block boundaries do not
   depend on the thread count, so neither do results. fn runs inside the
   parallel region, so it must not call R's API. */
void rff_for_blocks(int n, int D, int threads, rff_block_fn fn, void *ctx)
{
    R_xlen_t nblocks = ((R_xlen_t) n + RFF_BLOCK_ROWS - 1) / RFF_BLOCK_ROWS;
    /* between batches the main thread checks for an interrupt: a batch is
       about 2^22 features per thread (a few ms), whatever D is; a single
       block runs on the calling thread (starting a team costs more) */
    R_xlen_t per_thread = ((R_xlen_t) 1 << 22) / ((R_xlen_t) RFF_BLOCK_ROWS * D);
    if (per_thread < 1) per_thread = 1;
    const R_xlen_t batch = per_thread * (R_xlen_t) (threads > 0 ? threads : 1);
    for (R_xlen_t b0 = 0; b0 < nblocks; b0 += batch) {
        R_xlen_t b1 = b0 + batch < nblocks ? b0 + batch : nblocks;
        /* no more threads than blocks: idle threads only cost a wake-up */
        int nth = b1 - b0 < threads ? (int) (b1 - b0) : threads;
        /* a threaded BLAS called from the blocks (wide inputs, arc-cosine
           maps) runs on one thread while rff's threads do, and on one
           thread for one of rff's, so results do not depend on `threads` */
        int blas_saved = rff_blas_set_threads(1);
        /* blocks handed out one at a time: a thread whose core is busy with
           another process takes fewer of them instead of holding up the
           batch (results do not depend on which thread runs a block) */
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(dynamic, 1) if (nth > 1)
#endif
        for (R_xlen_t b = b0; b < b1; b++) {
            int r0 = (int) (b * RFF_BLOCK_ROWS);
            fn(ctx, r0, n - r0 < RFF_BLOCK_ROWS ? n - r0 : RFF_BLOCK_ROWS);
        }
        rff_blas_set_threads(blas_saved);
        rff_check_interrupt();
    }
}

typedef struct {
    const rff_fmap *map;
    const double *x;
    int ldx;
    double *z;
    int ldz;
} featurize_ctx;

static void featurize_block(void *ctx_, int r0, int nr)
{
    const featurize_ctx *c = ctx_;
    rff_featurize_rows(c->map, c->x + r0, c->ldx, nr, c->z + r0, c->ldz);
}

/* Features of kernels that can overflow (the polynomial kernel, the
   arc-cosine kernel of order 1 in a Nystrom map) must be finite: an
   rff_error otherwise, rather than NaN statistics downstream. */
static void check_finite_features(const double *z, int n, int D, int ldz)
{
    for (int j = 0; j < D; j++) {
        const double *zj = z + (R_xlen_t) j * ldz;
        for (int i = 0; i < n; i++)
            if (!R_FINITE(zj[i]))
                rff_abort_arg("lengthscale",
                              "the features are not finite: the kernel's values overflow "
                              "for data of this scale; use a larger `lengthscale`");
    }
}

/* n rows of x (n x d, column-major, leading dimension ldx) into z (n x D,
   leading dimension ldz). Main thread only. */
void rff_featurize(const rff_fmap *map, const double *x, int ldx, int n, double *z,
                   int ldz, int threads)
{
    if (n <= 0) return;
    if (rff_fmap_blockwise(map)) {
        featurize_ctx ctx = {map, x, ldx, z, ldz};
        rff_for_blocks(n, map->D, threads, featurize_block, &ctx);
        return;
    }
    if (map->user != R_NilValue) {
        /* an rff_spectral kernel: evaluated by R, on this thread */
        rff_nystrom_user(map, x, ldx, n, z, ldz);
        check_finite_features(z, n, map->D, ldz);
        return;
    }
    /* each thread gets its own workspace, released at the end (callers
       featurize chunk after chunk in one .Call) */
    const void *vmax = vmaxget();
    rff_fmap local = *map;
    if (map->features == RFF_FEATURES_SKETCH) {
        local.work_per_thread = rff_sketch_work(map);
    } else {
        local.work_per_thread = rff_nystrom_work(map);
        threads = rff_nystrom_threads(map, threads);
    }
    local.work = (double *) R_alloc((size_t) threads * local.work_per_thread, sizeof(double));
    featurize_ctx ctx = {&local, x, ldx, z, ldz};
    /* a Nystrom feature costs about D / 16 Fourier features (its share of
       the dgemm): batches between interrupt checks shrink accordingly */
    double width = map->D;
    if (map->features == RFF_FEATURES_NYSTROM && map->D > 16) width *= map->D / 16.0;
    rff_for_blocks(n, width > INT_MAX ? INT_MAX : (int) width, threads, featurize_block, &ctx);
    check_finite_features(z, n, map->D, ldz);
    vmaxset(vmax);
}

/* Fourier and arc-cosine features are finite when every projection
   omega_j'x_i is: when no sum of |x_ik| |omega_kj| exceeds 1e308, no order
   of summation overflows (nor does a phase added). Cheap unless the
   largest |x| times the largest column sum of |omega| exceeds that: only
   then are the sums formed, row by row. */
#define RFF_PROJECTION_MAX 1e308
void rff_check_projections(const rff_fmap *fm, const double *x, int ldx, int n)
{
    if (!rff_fmap_blockwise(fm) || n <= 0) return;
    int d = fm->d, m = fm->m;
    double xmax = 0.0, wmax = 0.0;
    for (int k = 0; k < d; k++)
        for (int i = 0; i < n; i++) {
            double a = fabs(x[i + (R_xlen_t) k * ldx]);
            if (!(a <= xmax)) xmax = a;  /* NaN propagates */
        }
    for (int j = 0; j < m; j++) {
        double s = 0.0;
        for (int k = 0; k < d; k++) s += fabs(fm->omega[k + (R_xlen_t) j * d]);
        if (s > wmax) wmax = s;
    }
    if (xmax * wmax <= RFF_PROJECTION_MAX) return;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++) {
            double s = 0.0;
            const double *w = fm->omega + (R_xlen_t) j * d;
            for (int k = 0; k < d; k++) s += fabs(x[i + (R_xlen_t) k * ldx]) * fabs(w[k]);
            if (!(s <= RFF_PROJECTION_MAX))
                rff_abort_arg("x", "`x` is too large for the map: |omega'x| can exceed 1e308 "
                              "at row %d (largest |x| %g), where the features are not "
                              "finite; rescale `x` or use a larger `lengthscale`",
                              i + 1, xmax);
        }
        if ((i + 1) % RFF_BLOCK_ROWS == 0) rff_check_interrupt();
    }
}

/* The arguments every routine that featurizes the rows of x through map
   starts with: map read into fm, and x checked to be a double matrix with
   the map's d columns (unless x is R_NilValue: the rows come from
   elsewhere). Returns the threads to use. */
int rff_featurize_args(SEXP x, SEXP map, SEXP threads, rff_fmap *fm)
{
    rff_fmap_from_list(map, fm);
    int nth = rff_threads(threads);
    if (x != R_NilValue) {
        rff_check_real_matrix(x, "x");
        if (Rf_ncols(x) != fm->d)
            Rf_error("`x` has %d columns but the map expects %d", Rf_ncols(x), fm->d);
        rff_check_projections(fm, REAL(x), Rf_nrows(x), Rf_nrows(x));
    }
    return nth;
}

SEXP rff_features(SEXP x, SEXP map, SEXP threads_)
{
    rff_fmap fm;
    int threads = rff_featurize_args(x, map, threads_, &fm);
    int n = Rf_nrows(x);
    SEXP z = PROTECT(Rf_allocMatrix(REALSXP, n, fm.D));
    rff_prepare_result(REAL(z), (size_t) n * fm.D * sizeof(double), threads);
    if (n > 0) rff_featurize(&fm, REAL(x), n, n, REAL(z), n, threads);
    UNPROTECT(1);
    return z;
}
