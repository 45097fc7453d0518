/* Shared declarations for the rff C routines. */
#ifndef RFF_H
#define RFF_H

#define USE_FC_LEN_T
#define R_NO_REMAP
#include <R.h>
#include <Rinternals.h>
#include <Rmath.h>
#include <R_ext/BLAS.h>
#include <R_ext/Lapack.h>
#include <limits.h>
#include <stddef.h>
#include <string.h>
#ifndef FCONE
#define FCONE
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

/* The files form layers, each using only files above it in this list (in
   parentheses, those whose symbols it uses, as tools/layers.sh prints them
   from the object files; a test checks them for cycles):
     helpers: args.c, gemm512.c (none); gemm.c (gemm512); blas.c, matvec.c (gemm); runtime.c
       (args, blas):
       argument, list, BLAS, thread and interrupt helpers
     spectral.c (none): spectral laws
     kernels.c (args, runtime, spectral): the kernel table, exact kernels
     map drawing: orthogonal.c, qmc.c (runtime); polynomial.c (args,
       kernels); sample.c (args, kernels, orthogonal, polynomial, qmc)
     featurization, beside map drawing: fused.c (runtime); tensorsketch.c
       (args, kernels); nystrom.c (args, kernels, runtime); features.c
       (args, blas, fused, kernels, nystrom, runtime, tensorsketch)
     consumers: ridge.c (args, blas, features, runtime); glm.c (args,
       features); error.c (args, blas, features, fused, runtime, sample);
       lbfgs.c (args, blas, features, glm, runtime); ard.c (args, blas, features, runtime)
   init.c only registers the .Call routines. */

/* ---- bottom layer: argument, list, thread and interrupt helpers ---- */

/* An rff_error naming the argument; does not return. */
void rff_abort_arg(const char *arg, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
int rff_string_code(SEXP s, const char *what, const char *const *names);
int rff_variant_code(SEXP variant);
int rff_sampler_code(SEXP sampler);
int rff_order_code(SEXP order);
SEXP rff_list_elt(SEXP list, const char *name);
SEXP rff_list_elt_opt(SEXP list, const char *name);
SEXP rff_list2(const char *a, SEXP va, const char *b, SEXP vb);
const double *rff_weights_ptr(SEXP weights, R_xlen_t n);
void rff_runtime_init(void);
int rff_in_forked_child(void);
/* The threads a routine uses: `threads`, at most the number of processors
   and omp_get_thread_limit() (OMP_THREAD_LIMIT), and one in a forked child. */
int rff_threads(SEXP threads);
/* The BLAS found at load time, its threads, and how products are split
   between its threads and rff's (see blas.c). */
enum { RFF_BLAS_PLAIN = 0, RFF_BLAS_OPENBLAS = 1, RFF_BLAS_BLIS = 2, RFF_BLAS_MKL = 3,
       RFF_BLAS_FLEXIBLAS = 4 };
enum { RFF_SPLIT_BLOCKS = 0, RFF_SPLIT_BLAS = 1 };
void rff_blas_detect(void);
/* rff's own product (gemm.c): c = beta c + op(a) op(b), with tri >= 0 only
   entries i <= j + tri; -1 (nothing done) where it cannot run. */
int rff_gemm_available(void);
int rff_gemm_ready(void);
int rff_gemm_set_wide(int on);
int rff_gemm_narrow(int n);
int rff_gemm(int ta, int tb, int m, int n, int k, const double *a, int lda,
             const double *b, int ldb, double beta, double *c, int ldc, int tri);
/* a'b for blocks of columns of a with one narrow b, b' packed once. */
double *rff_gemm_cols_pack(int n, int k, const double *b, int ldb, int threads);
void rff_gemm_cols(int m, int n, int k, const double *a, int lda, const double *packed,
                   double beta, double *c, int ldc);
/* op(a) packed once for products with several blocks of columns of op(b). */
double *rff_gemm_pack(int ta, int m, int k, const double *a, int lda, int threads);
int rff_gemm_packed(int tb, int m, int n, int k, const double *packed, int mp,
                    const double *b, int ldb, double beta, double *c, int ldc, int tri);
/* Whether the large products run on rff's own kernel, and its switch. */
int rff_blas_own(void);
int rff_blas_own_available(void);
int rff_blas_own_rows(int n);
void rff_blas_set_own(int on);
/* c = op(a) op(b) + beta c on the calling thread (own kernel or BLAS). */
void rff_dgemm_seq(const char *ta, const char *tb, int m, int n, int k,
                   const double *a, int lda, const double *b, int ldb,
                   double beta, double *c, int ldc);
int rff_blas_kind(void);
int rff_blas_split(void);
int rff_blas_get_threads(void);
int rff_blas_set_threads(int n);
/* c = op(a) op(b) + beta c (dgemm, alpha = 1) on one BLAS thread. */
void rff_dgemm1(const char *ta, const char *tb, int m, int n, int k,
                const double *a, int lda, const double *b, int ldb,
                double beta, double *c, int ldc);
/* The upper triangle of c = a'a (trans "T") or aa' (trans "N") + beta c,
   and c = op(a) op(b) + beta c, on `threads` cores shared between rff's
   threads and the BLAS's; results do not depend on `threads`. */
void rff_dsyrk_threads(const char *trans, int n, int k, const double *a,
                       int lda, double beta, double *c, int ldc, int threads);
void rff_dgemm_threads(const char *ta, const char *tb, int m, int n, int k,
                       const double *a, int lda, const double *b, int ldb,
                       double beta, double *c, int ldc, int threads);
/* The same for products with few columns: fixed blocks of rows of c. */
void rff_dgemm_rows(const char *ta, const char *tb, int m, int n, int k,
                    const double *a, int lda, const double *b, int ldb,
                    double beta, double *c, int ldc, int threads);
/* z (n x k) <- Q z, Q the reflectors of dsytrd("L") in a and tau, on
   rff's own kernel (reflect.c; only when rff_blas_own()). */
void rff_reflect(const double *a, int n, const double *tau, double *z, int k,
                 int threads);
/* dsytrd("L") of a (n x n) with its trailing updates on rff's own kernel
   (reflect.c); LAPACK's info. */
int rff_tridiag(double *a, int n, double *d, double *e, double *tau, int threads);
/* Matrix-vector products on one core (matvec.c), -1 without the kernel:
   y = A x, A (r x r) symmetric with its lower triangle at a; y -= A x;
   out = A' v. */
int rff_symv_lower(int r, const double *a, int lda, const double *x, double *y);
int rff_gemv_sub(int len, int nc, const double *a, int lda, const double *x, int incx,
                 double *y);
int rff_gemv_t(int len, int nc, const double *a, int lda, const double *v, double *out);
/* The lower triangle of c (n x n) set from its upper triangle. */
void rff_mirror_upper(double *c, int n, int ldc);
/* R_CheckUserInterrupt(), counted (see rff_runtime_info). */
void rff_check_interrupt(void);

/* ---- spectral laws and kernels: one table of (name, law, exact kappa) ---- */

/* Draws one frequency (length d) of the unit-lengthscale spectral measure. */
typedef void (*rff_draw_fn)(int d, double param, double *omega);
/* Exact kernel at a lengthscale-scaled offset u (length d). */
typedef double (*rff_kappa_fn)(const double *u, int d, double param);
/* Draws the norm of one frequency of a radial kernel (unit lengthscale). */
typedef double (*rff_radius_fn)(int d, double param);
/* Inverse CDF: a point u of (0,1)^(d + qmc_extra) to one frequency (length d). */
typedef void (*rff_quantile_fn)(int d, double param, const double *u,
                                double *omega);
/* Exact kernel of a kernel that is not shift-invariant, at lengthscale-scaled
   inputs a and b (length d), with its parameters par (rff_kernel_params). */
typedef double (*rff_pair_fn)(const double *a, const double *b, int d,
                              const double *par);
/* A radial or product kernel as a function of s = sum_k u_k^2 (dist 2) or
   s = sum_k |u_k| (dist 1) at the lengthscale-scaled offset u. */
typedef double (*rff_profile_fn)(double s, double param);

/* What the features of a map are made of: Fourier or arc-cosine features of
   drawn frequencies, a TensorSketch (polynomial kernel), or kernel
   evaluations at landmarks (Nystrom). */
enum { RFF_FEATURES_FOURIER = 0, RFF_FEATURES_ARCCOS = 1, RFF_FEATURES_SKETCH = 2,
       RFF_FEATURES_NYSTROM = 3 };

typedef struct {
    const char *name;
    rff_draw_fn draw;
    rff_kappa_fn kappa;         /* returns NaN when not shift-invariant */
    rff_radius_fn radius;       /* NULL when not radial (no "orthogonal") */
    rff_quantile_fn quantile;   /* NULL when there is no "qmc" */
    int qmc_extra;              /* uniforms beyond d used by quantile */
    rff_pair_fn pair;           /* exact kernel k(a, b) of a kernel that is
                                   not shift-invariant; NULL otherwise */
    int features;               /* RFF_FEATURES_* */
    rff_profile_fn profile;     /* kappa as a function of s; NULL if none */
    int dist;                   /* 2: s = sum u^2, 1: s = sum |u| */
} rff_kernel_def;

/* spectral laws (spectral.c) */
void rff_draw_gaussian(int d, double param, double *omega);
void rff_draw_laplace(int d, double param, double *omega);
void rff_draw_matern(int d, double param, double *omega);
double rff_radius_gaussian(int d, double param);
double rff_radius_matern(int d, double param);
void rff_quantile_gaussian(int d, double param, const double *u, double *omega);
void rff_quantile_laplace(int d, double param, const double *u, double *omega);
void rff_quantile_matern(int d, double param, const double *u, double *omega);

/* kernels (kernels.c) */
/* The valid range of the Matern nu (see ?rff_map). */
#define RFF_NU_MIN 0.05
#define RFF_NU_MAX 1e6
/* The largest degree of the polynomial kernel (see ?rff_polynomial). */
#define RFF_DEGREE_MAX 30
const rff_kernel_def *rff_kernel_lookup(SEXP name);
double rff_arccos_exact(const double *a, const double *b, int d, const double *par);
double rff_polynomial_exact(const double *a, const double *b, int d, const double *par);
int rff_is_spectral(SEXP kernel);
double rff_nu_value(SEXP nu, const rff_kernel_def *k);
/* The kernel's parameters, read by name from a list (a map or a spec):
   par[0] = nu, or the arc-cosine order, or the polynomial degree; par[1] =
   the polynomial offset. */
void rff_kernel_params(SEXP list, const rff_kernel_def *k, double *par);
int rff_degree_value(SEXP degree);

/* ---- feature maps as seen by the featurization routine ---- */

enum { RFF_VARIANT_PAIR = 0, RFF_VARIANT_PHASE = 1 };

typedef struct {
    int variant;          /* RFF_VARIANT_* */
    int d;                /* input dimension */
    int m;                /* number of frequencies (columns of omega) */
    int D;                /* number of features */
    const double *omega;  /* d x m, column-major, lengthscale applied */
    const double *phase;  /* length D for "phase", NULL for "pair" */
    double scale;         /* sqrt(2 / D) */
    int features;         /* RFF_FEATURES_*; 0 (Fourier) when left zeroed */
    int order;            /* arc-cosine order (0 or 1) */
    /* TensorSketch and Nystrom maps (NULL or 0 otherwise) */
    const double *inv_ls; /* 1 / lengthscale, length d */
    int degree;           /* polynomial degree */
    double root_offset;   /* sqrt(offset) of the polynomial kernel */
    const int *hash;      /* (d + 1) x degree buckets in 0..D-1 */
    const double *sign;   /* (d + 1) x degree signs, +-1 */
    const rff_kernel_def *kernel;   /* Nystrom: the kernel evaluated */
    double par[2];        /* its parameters (rff_kernel_params) */
    const double *landmarks;        /* D x d, divided by the lengthscale */
    const double *weights;          /* D x D: K(L, L)^(-1/2), thresholded */
    SEXP user;            /* Nystrom with an rff_spectral kernel: the map,
                             evaluated by calling R (main thread only) */
    /* per-thread workspace of the blocked loop, set by rff_featurize() */
    double *work;
    size_t work_per_thread;         /* doubles */
} rff_fmap;

enum { RFF_SAMPLER_IID = 0, RFF_SAMPLER_ORTHOGONAL = 1, RFF_SAMPLER_QMC = 2,
       RFF_SAMPLER_NYSTROM = 3 };

/* What a map is drawn from: read from an R list with the map's parameters
   (kernel, d, D, lengthscale, nu, variant, sampler), so that new parameters
   are new list fields rather than new routine arguments. */
typedef struct {
    const rff_kernel_def *kernel;
    int variant;          /* RFF_VARIANT_* */
    int d, D, m;          /* m = number of frequencies */
    const double *lengthscale;
    R_xlen_t n_ls;        /* 1 or d */
    double nu;
    int sampler;          /* RFF_SAMPLER_*; field "sampler", "iid" if absent */
    int order;            /* field "order" (arc-cosine kernel), 1 if absent */
    SEXP user;            /* an rff_spectral kernel (drawn by calling R), or
                             R_NilValue; kernel is then rff_spectral_def */
} rff_spec;

extern const rff_kernel_def rff_spectral_def;


/* map drawing (sample.c, orthogonal.c, qmc.c, polynomial.c) */
void rff_draw_orthogonal(const rff_spec *spec, double *omega);
void rff_draw_qmc(const rff_spec *spec, double *omega, double *phase);
SEXP rff_draw_sketch(SEXP spec);
void rff_spec_from_list(SEXP spec, rff_spec *out);
void rff_spec_draw(const rff_spec *spec, double *omega, double *phase);
/* featurization (features.c, fused.c) */
void rff_fmap_from_list(SEXP map, rff_fmap *out);
/* The start of the routines that featurize x through map: map read into fm,
   x (unless R_NilValue) checked against it; returns the threads to use. */
int rff_featurize_args(SEXP x, SEXP map, SEXP threads, rff_fmap *fm);
/* An rff_error naming `x` when a Fourier or arc-cosine feature of the n
   rows of x (leading dimension ldx) could overflow (|omega'x| > 1e300). */
void rff_check_projections(const rff_fmap *fm, const double *x, int ldx, int n);
/* Whether rff_featurize_rows() can featurize a block on any thread by
   itself (no workspace, no R); otherwise only rff_featurize() may. */
int rff_fmap_blockwise(const rff_fmap *map);
/* TensorSketch (tensorsketch.c) and Nystrom (nystrom.c) features */
void rff_sketch_read(SEXP map, rff_fmap *out);
size_t rff_sketch_work(const rff_fmap *map);
void rff_sketch_rows(const rff_fmap *map, const double *x, int ldx, int nrows,
                     double *z, int ldz, double *work);
void rff_nystrom_read(SEXP map, rff_fmap *out);
size_t rff_nystrom_work(const rff_fmap *map);
void rff_nystrom_rows(const rff_fmap *map, const double *x, int ldx, int nrows,
                      double *z, int ldz, double *work);
void rff_nystrom_user(const rff_fmap *map, const double *x, int ldx, int n,
                      double *z, int ldz);
int rff_nystrom_threads(const rff_fmap *map, int threads);
void rff_fmap_from_spec(const rff_spec *spec, const double *omega,
                        const double *phase, rff_fmap *out);
void rff_featurize_rows(const rff_fmap *map, const double *x, int ldx,
                        int nrows, double *z, int ldz);
/* the shift-invariant ("pair", "phase") kernels, in fused.c */
void rff_featurize_rows_si(const rff_fmap *map, const double *x, int ldx,
                           int nrows, double *z, int ldz);
void rff_prepare_result(double *z, size_t bytes, int threads);
void rff_featurize(const rff_fmap *map, const double *x, int ldx, int n, double *z,
                   int ldz, int threads);
typedef void (*rff_block_fn)(void *ctx, int r0, int nr);
void rff_for_blocks(int n, int D, int threads, rff_block_fn fn, void *ctx);
int rff_dot_fused_ok(const rff_fmap *map);
void rff_dot_rows_si(const rff_fmap *map, const double *x, int ldx, int nrows,
                     const double *v, int mv, double *out, int ldo);

/* ---- inline argument helpers (backstops behind the R-level checks) ---- */

#define RFF_BLOCK_ROWS 256

static R_INLINE int rff_as_int(SEXP s, const char *what, int lo)
{
    if (XLENGTH(s) != 1)
        Rf_error("`%s` must be a single number", what);
    double v = Rf_asReal(s);
    if (ISNAN(v) || v < lo || v > INT_MAX)
        Rf_error("`%s` must be an integer >= %d", what, lo);
    return (int) v;
}

static R_INLINE double rff_as_double(SEXP s, const char *what)
{
    if (XLENGTH(s) != 1)
        Rf_error("`%s` must be a single number", what);
    double v = Rf_asReal(s);
    if (!R_FINITE(v))
        Rf_error("`%s` must be finite", what);
    return v;
}

static R_INLINE void rff_check_real_matrix(SEXP x, const char *what)
{
    if (!Rf_isReal(x) || !Rf_isMatrix(x))
        Rf_error("`%s` must be a double matrix", what);
}

/* LAPACK's symmetric eigensolvers never return on NaN input and its
   factorizations give garbage on it: every matrix handed to LAPACK is
   checked first, as base R's eigen() does. */
static R_INLINE void rff_check_finite(const double *a, R_xlen_t len,
                                      const char *what)
{
    for (R_xlen_t i = 0; i < len; i++)
        if (!R_FINITE(a[i]))
            Rf_error("`%s` has a missing or infinite value (element %.0f)",
                     what, (double) i + 1);
}

/* A lengthscale of length 1 or d, positive and finite. */
static R_INLINE const double *rff_check_lengthscale(SEXP ls, int d)
{
    if (!Rf_isReal(ls) || (XLENGTH(ls) != 1 && XLENGTH(ls) != d))
        Rf_error("`lengthscale` must be a double of length 1 or d");
    const double *l = REAL(ls);
    for (R_xlen_t i = 0; i < XLENGTH(ls); i++)
        if (!(R_FINITE(l[i]) && l[i] > 0))
            Rf_error("`lengthscale` must be positive and finite");
    return l;
}

/* The loss w l(eta) of one row of a GLM family (0 binomial, 1 Poisson, 2
   multinomial, class cls 0-based) and its residuals w (mu - y) in r (K
   columns of eta and r, stride ld); glm.c. */
double rff_glm_row(int family, double yi, int cls, double w, const double *eta,
                   double *r, R_xlen_t ld, int K);

/* .Call entry points */
SEXP rff_draw_map(SEXP spec);
SEXP rff_features(SEXP x, SEXP map, SEXP threads);
SEXP rff_glm_pass(SEXP x, SEXP Zcache, SEXP map, SEXP y, SEXP family,
                  SEXP offset, SEXP weights, SEXP coef, SEXP intercept,
                  SEXP chunk_size, SEXP threads, SEXP want_eta);
SEXP rff_glm_lbfgs(SEXP X, SEXP y, SEXP family, SEXP offset, SEXP weights, SEXP W,
                   SEXP th, SEXP lambda, SEXP inv_mu, SEXP inv_den, SEXP U, SEXP zbar,
                   SEXP intercept, SEXP control, SEXP mem, SEXP cur, SEXP threads,
                   SEXP V);
SEXP rff_kernel_exact(SEXP x, SEXP y, SEXP spec);
SEXP rff_halton(SEXP n, SEXP s, SEXP randomize);
SEXP rff_kernel_error(SEXP x, SEXP y, SEXP K, SEXP source, SEXP reps,
                      SEXP keep, SEXP spectral, SEXP threads);
SEXP rff_ridge_stats(SEXP x, SEXP y, SEXP yshift, SEXP weights, SEXP map,
                     SEXP rows, SEXP chunk_size, SEXP threads);
SEXP rff_ridge_predict(SEXP x, SEXP map, SEXP beta, SEXP chunk_size,
                       SEXP threads);
SEXP rff_ridge_chol(SEXP A, SEXP B, SEXP nl);
SEXP rff_ridge_eigen(SEXP A, SEXP threads);
SEXP rff_gram_eigen(SEXP K, SEXP rel_tol, SEXP threads, SEXP low_rank);
SEXP rff_ridge_project(SEXP a, SEXP b, SEXP threads);
SEXP rff_rows_product(SEXP a, SEXP b, SEXP trans, SEXP threads);
SEXP rff_loo_block(SEXP f, SEXP y, SEXP rows, SEXP cols, SEXP w, SEXP h, SEXP ybar,
                   SEXP acc);
SEXP rff_ridge_thin_products(SEXP a, SEXP b, SEXP threads);
SEXP rff_ard_gradient(SEXP x, SEXP map, SEXP dz, SEXP zbar, SEXP G, SEXP g,
                      SEXP yc, SEXP weights, SEXP chunk_size, SEXP threads);
SEXP rff_trig(SEXP x);
SEXP rff_runtime_info(SEXP after, SEXP threads);
SEXP rff_set_own_products(SEXP on);
SEXP rff_blas_found(void);
SEXP rff_own_product(SEXP a, SEXP b, SEXP trans, SEXP beta, SEXP c, SEXP tri);
SEXP rff_set_wide_products(SEXP on);

#endif
