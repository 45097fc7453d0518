/* Threads and interrupts: how many threads a routine may start (at most
   OMP_THREAD_LIMIT, one in a forked child), and the interrupt checks of
   long loops (with a countdown that the tests use to interrupt at a known
   point). Bottom layer, above blas.c. */
#include "rff.h"
#include <signal.h>
#ifndef _WIN32
#include <unistd.h>
#endif

/* GCC's OpenMP runtime keeps its thread pool across fork(), so a parallel
   region of more than one thread in a forked child (parallel::mclapply,
   future's multicore plan) waits forever for threads that do not exist in
   the child. A process whose id differs from the one that loaded the
   package is such a child, and runs every routine on one thread. A pid
   check rather than a pthread_atfork() handler: a handler cannot be
   removed when the package is unloaded, and would then be called at a
   dangling address. */
#ifndef _WIN32
static pid_t loaded_pid = 0;
#endif

void rff_runtime_init(void)
{
#ifndef _WIN32
    loaded_pid = getpid();
#endif
    rff_blas_detect();
}

int rff_in_forked_child(void)
{
#ifndef _WIN32
    return loaded_pid != 0 && getpid() != loaded_pid;
#else
    return 0;
#endif
}

int rff_threads(SEXP threads)
{
    int nth = rff_as_int(threads, "threads", 1);
#ifdef _OPENMP
    int mx = omp_get_num_procs();
    if (nth > mx) nth = mx;
    /* OMP_THREAD_LIMIT, as data.table's thread count honours it: OpenMP caps
       rff's teams at it anyway, but not the BLAS threads given `threads` */
    int limit = omp_get_thread_limit();
    if (nth > limit) nth = limit;
    if (rff_in_forked_child()) nth = 1;
    return nth;
#else
    (void) nth;
    return 1;
#endif
}

/* Interrupt checks, counted; when the countdown is armed, the check at
   which it reaches zero raises SIGINT first, as a Ctrl-C would. */
static double checks_done = 0;
static double countdown = 0;   /* 0: not armed */

void rff_check_interrupt(void)
{
    checks_done++;
    if (countdown > 0 && --countdown == 0) raise(SIGINT);
    R_CheckUserInterrupt();
}

/* The names of the BLAS kinds of blas.c (RFF_BLAS_PLAIN ...), as R sees them. */
static const char *const blas_kinds[] = {"plain", "openblas", "blis", "mkl", "flexiblas"};

/* What a routine asked for `threads` would do: the interrupt checks made so
   far in this process, the threads it would use, whether this is a forked
   child, the BLAS found, its threads now and how products are split
   between them and rff's (blas.c); and arms the countdown to
   raise SIGINT at the after-th check from now (after = 0 disarms; the
   tests use it). */
SEXP rff_runtime_info(SEXP after, SEXP threads)
{
    double a = rff_as_double(after, "after");
    if (a < 0) rff_abort_arg("after", "`after` must be >= 0");
    static const char *const splits[] = {"blocks", "blas"};
    const char *nms[] = {"checks", "threads", "forked", "blas", "blas_threads",
                         "split", "products", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms));
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(checks_done));
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(rff_threads(threads)));
    SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(rff_in_forked_child()));
    SET_VECTOR_ELT(out, 3, Rf_mkString(blas_kinds[rff_blas_kind()]));
    SET_VECTOR_ELT(out, 4, Rf_ScalarInteger(rff_blas_get_threads()));
    SET_VECTOR_ELT(out, 5, Rf_mkString(splits[rff_blas_split()]));
    SET_VECTOR_ELT(out, 6, Rf_mkString(rff_blas_own() ? "rff" : "blas"));
    countdown = floor(a);
    UNPROTECT(1);
    return out;
}

/* Switches rff's own product kernel (gemm.c) on or off (`on`: TRUE or
   FALSE; NA leaves it), returning whether the large products now run on
   it; options(rff.products) drives it (R/runtime.R). */
SEXP rff_set_own_products(SEXP on)
{
    if (TYPEOF(on) != LGLSXP || XLENGTH(on) != 1)
        rff_abort_arg("on", "`on` must be TRUE, FALSE or NA");
    if (LOGICAL(on)[0] != NA_LOGICAL) rff_blas_set_own(LOGICAL(on)[0]);
    return Rf_ScalarLogical(rff_blas_own());
}

/* The BLAS found when the package was loaded ("plain", "openblas", "blis",
   "mkl" or "flexiblas", as rff_runtime_info()) and whether this processor
   and build run rff's own product kernel (AVX2 and FMA on x86-64, outside
   Windows): what options(rff.products) = "auto" decides from (R/runtime.R). */
SEXP rff_blas_found(void)
{
    const char *nms[] = {"blas", "kernel", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms));
    SET_VECTOR_ELT(out, 0, Rf_mkString(blas_kinds[rff_blas_kind()]));
    SET_VECTOR_ELT(out, 1, Rf_ScalarLogical(rff_blas_own_available()));
    UNPROTECT(1);
    return out;
}

/* Switches the 512-bit register kernels of rff's own product (gemm.c) on
   or off (`on`: TRUE or FALSE; NA leaves them), returning whether they now
   run: on only where the processor has AVX-512F. For the tests, which
   compare them with the AVX2 kernels. */
SEXP rff_set_wide_products(SEXP on)
{
    if (TYPEOF(on) != LGLSXP || XLENGTH(on) != 1)
        rff_abort_arg("on", "`on` must be TRUE, FALSE or NA");
    int v = LOGICAL(on)[0];
    return Rf_ScalarLogical(rff_gemm_set_wide(v == NA_LOGICAL ? -1 : v != 0));
}

/* op(a) op(b) + beta c on rff's own kernel alone (gemm.c), for the tests:
   trans = c(ta, tb) logical, c a matrix of the result's size, tri < 0 for
   all entries or the kept triangle's offset (rff_gemm()); NULL where the
   kernel cannot run. */
SEXP rff_own_product(SEXP a, SEXP b, SEXP trans, SEXP beta, SEXP c, SEXP tri)
{
    rff_check_real_matrix(a, "a");
    rff_check_real_matrix(b, "b");
    rff_check_real_matrix(c, "c");
    if (TYPEOF(trans) != LGLSXP || XLENGTH(trans) != 2 || LOGICAL(trans)[0] == NA_LOGICAL ||
        LOGICAL(trans)[1] == NA_LOGICAL)
        rff_abort_arg("trans", "`trans` must be two logicals, not NA");
    const int ta = LOGICAL(trans)[0] == 1, tb = LOGICAL(trans)[1] == 1;
    const int m = ta ? Rf_ncols(a) : Rf_nrows(a), k = ta ? Rf_nrows(a) : Rf_ncols(a);
    const int n = tb ? Rf_nrows(b) : Rf_ncols(b), kb = tb ? Rf_ncols(b) : Rf_nrows(b);
    if (kb != k) rff_abort_arg("b", "`b` does not conform with `a`");
    if (Rf_nrows(c) != m || Rf_ncols(c) != n) rff_abort_arg("c", "`c` must be %d x %d", m, n);
    double bt = rff_as_double(beta, "beta");
    double tr = rff_as_double(tri, "tri");
    if (!(tr >= -1 && tr <= INT_MAX)) rff_abort_arg("tri", "`tri` must be at least -1");
    int t = (int) tr;
    SEXP out = PROTECT(Rf_duplicate(c));
    int ok = rff_gemm(ta, tb, m, n, k, REAL(a), Rf_nrows(a) > 0 ? Rf_nrows(a) : 1, REAL(b),
                      Rf_nrows(b) > 0 ? Rf_nrows(b) : 1, bt, REAL(out), m > 0 ? m : 1, t);
    UNPROTECT(1);
    return ok == 0 ? out : R_NilValue;
}
