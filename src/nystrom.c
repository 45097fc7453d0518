/* Nystrom features z(x) = K(x, L) W, W = K(L, L)^(-1/2) (eigenvalues below
   the threshold dropped, see ?rff_nystrom): for a chunk of rows, the kernel
   against the D landmarks, vectorized over the rows, then one dgemm with W.
   The map (landmarks and W) is made in R. */
#include "rff.h"

/* Rows per chunk: the chunk's kernel matrix (chunk x D) is per thread; up
   to a block of rows while it stays within 2 MB, at least 16. */
static int nystrom_rows(int D)
{
    int r = (int) (((R_xlen_t) 1 << 18) / D);
    return r < 16 ? 16 : r > RFF_BLOCK_ROWS ? RFF_BLOCK_ROWS : r & ~7;
}

/* Reads and checks a Nystrom map: kernel and its parameters, d, D,
   lengthscale, landmarks (D x d), weights (D x D). */
void rff_nystrom_read(SEXP map, rff_fmap *out)
{
    out->features = RFF_FEATURES_NYSTROM;
    out->variant = RFF_VARIANT_PAIR;
    out->scale = 1.0;
    int d = out->d = rff_as_int(rff_list_elt(map, "d"), "map$d", 1);
    int D = out->D = rff_as_int(rff_list_elt(map, "D"), "map$D", 1);
    SEXP kernel = rff_list_elt(map, "kernel");
    if (rff_is_spectral(kernel)) {
        out->kernel = &rff_spectral_def;
        out->user = map;
    } else {
        out->kernel = rff_kernel_lookup(kernel);
        rff_kernel_params(map, out->kernel, out->par);
    }
    SEXP ls_ = rff_list_elt(map, "lengthscale");
    const double *ls = rff_check_lengthscale(ls_, d);
    R_xlen_t nls = XLENGTH(ls_);
    double *inv = (double *) R_alloc((size_t) d, sizeof(double));
    for (int k = 0; k < d; k++) inv[k] = 1.0 / ls[nls == 1 ? 0 : k];
    out->inv_ls = inv;
    SEXP lm = rff_list_elt(map, "landmarks"), w = rff_list_elt(map, "weights");
    if (!Rf_isReal(lm) || !Rf_isMatrix(lm) || Rf_nrows(lm) != D || Rf_ncols(lm) != d)
        rff_abort_arg("map", "`map` is damaged: `landmarks` must be a %d x %d double matrix",
                      D, d);
    if (!Rf_isReal(w) || !Rf_isMatrix(w) || Rf_nrows(w) != D || Rf_ncols(w) != D)
        rff_abort_arg("map", "`map` is damaged: `weights` must be a %d x %d double matrix",
                      D, D);
    const double *pl = REAL(lm), *pw = REAL(w);
    for (R_xlen_t i = 0; i < (R_xlen_t) D * D; i++)
        if (!R_FINITE(pw[i])) rff_abort_arg("map", "`map` is damaged: `weights` must be finite");
    /* landmarks divided by the lengthscale, one landmark per column (d x D) */
    double *lt = (double *) R_alloc((size_t) d * D, sizeof(double));
    for (int j = 0; j < D; j++)
        for (int k = 0; k < d; k++) {
            double v = pl[j + (R_xlen_t) k * D];
            if (!R_FINITE(v)) rff_abort_arg("map", "`map` is damaged: `landmarks` must be finite");
            lt[k + (R_xlen_t) j * d] = v * inv[k];
        }
    out->landmarks = lt;
    out->weights = pw;
}

/* Doubles of workspace per thread: the chunk's kernel matrix (chunk x D),
   its scaled rows (chunk x d) and the chunk's sums (chunk). */
size_t rff_nystrom_work(const rff_fmap *map)
{
    return (size_t) nystrom_rows(map->D) * ((size_t) map->D + map->d + 1);
}

/* R's Bessel function may warn (an R call), so the Matern kernel with a nu
   that needs it runs on the calling thread only. */
int rff_nystrom_threads(const rff_fmap *map, int threads)
{
    double nu = map->par[0];
    if (strcmp(map->kernel->name, "matern") == 0 &&
        !(nu == 0.5 || nu == 1.5 || nu == 2.5 || nu >= 50.0))
        return 1;
    return threads;
}

void rff_nystrom_rows(const rff_fmap *map, const double *x, int ldx, int nrows,
                      double *z, int ldz, double *work)
{
    const int d = map->d, D = map->D, S = nystrom_rows(D);
    const rff_kernel_def *k = map->kernel;
    double *kx = work;                        /* S x D */
    double *u = kx + (size_t) S * D;          /* S x d */
    double *s = u + (size_t) S * d;           /* S */
    for (int i0 = 0; i0 < nrows; i0 += S) {
        const int nr = nrows - i0 < S ? nrows - i0 : S;
        if (k->profile != NULL) {
            /* u column by column: s = sum_k (u_ik - l_jk)^2 (or |.|),
               vectorized over the rows */
            for (int c = 0; c < d; c++) {
                const double *xc = x + (R_xlen_t) c * ldx + i0;
                double *uc = u + (size_t) c * S, sc = map->inv_ls[c];
                for (int i = 0; i < nr; i++) uc[i] = xc[i] * sc;
            }
            for (int j = 0; j < D; j++) {
                const double *lj = map->landmarks + (size_t) j * d;
                for (int i = 0; i < nr; i++) s[i] = 0.0;
                for (int c = 0; c < d; c++) {
                    const double *uc = u + (size_t) c * S, l = lj[c];
                    if (k->dist == 2) {
#ifdef _OPENMP
#pragma omp simd
#endif
                        for (int i = 0; i < nr; i++) s[i] += (uc[i] - l) * (uc[i] - l);
                    } else {
#ifdef _OPENMP
#pragma omp simd
#endif
                        for (int i = 0; i < nr; i++) s[i] += fabs(uc[i] - l);
                    }
                }
                double *kj = kx + (size_t) j * S;
                for (int i = 0; i < nr; i++) kj[i] = k->profile(s[i], map->par[0]);
            }
        } else {
            /* kernels of two points: u row by row */
            for (int i = 0; i < nr; i++)
                for (int c = 0; c < d; c++)
                    u[c + (size_t) i * d] = x[i0 + i + (R_xlen_t) c * ldx] * map->inv_ls[c];
            for (int j = 0; j < D; j++) {
                const double *lj = map->landmarks + (size_t) j * d;
                double *kj = kx + (size_t) j * S;
                for (int i = 0; i < nr; i++)
                    kj[i] = k->pair(u + (size_t) i * d, lj, d, map->par);
            }
        }
        rff_dgemm_seq("N", "N", nr, D, D, kx, S, map->weights, D, 0.0, z + i0, ldz);
    }
}

/* Nystrom features of an rff_spectral kernel, whose kappa is an R function:
   the kernel against the landmarks by rff:::nystrom_user_kernel() for
   chunks of rows, then the dgemm; main thread only. */
void rff_nystrom_user(const rff_fmap *map, const double *x, int ldx, int n,
                      double *z, int ldz)
{
    const int d = map->d, D = map->D;
    /* about 8 MB of kernel values per call */
    int chunk = (int) (((R_xlen_t) 1 << 20) / D);
    if (chunk < 1) chunk = 1;
    SEXP ns = PROTECT(R_FindNamespace(Rf_mkString("rff")));
    SEXP fun = PROTECT(Rf_findFun(Rf_install("nystrom_user_kernel"), ns));
    for (int r0 = 0; r0 < n; r0 += chunk) {
        int nr = n - r0 < chunk ? n - r0 : chunk;
        SEXP xs = PROTECT(Rf_allocMatrix(REALSXP, nr, d));
        double *px = REAL(xs);
        for (int c = 0; c < d; c++)
            memcpy(px + (R_xlen_t) c * nr, x + (R_xlen_t) c * ldx + r0,
                   (size_t) nr * sizeof(double));
        SEXP call = PROTECT(Rf_lang3(fun, map->user, xs));
        SEXP kx = PROTECT(Rf_eval(call, ns));
        if (!Rf_isReal(kx) || XLENGTH(kx) != (R_xlen_t) nr * D)
            rff_abort_arg("kernel", "the kernel against the landmarks must be a %d x %d matrix",
                          nr, D);
        rff_dgemm_seq("N", "N", nr, D, D, REAL(kx), nr, map->weights, D, 0.0, z + r0, ldz);
        UNPROTECT(3);
        rff_check_interrupt();
    }
    UNPROTECT(2);
}
