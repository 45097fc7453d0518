/* Threads and interrupts: how many threads a routine may start (one in a
   forked child), the BLAS's own threads (found at run time), and the
   interrupt checks of long loops (with a countdown that the tests use to
   interrupt at a known point). Bottom layer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* RTLD_DEFAULT */
#endif
#include "rff.h"
#include <signal.h>
#include <stdint.h>
#ifndef _WIN32
#include <unistd.h>
#include <dlfcn.h>
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

static void blas_detect(void);

void rff_runtime_init(void)
{
#ifndef _WIN32
    loaded_pid = getpid();
#endif
    blas_detect();
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
    if (rff_in_forked_child()) nth = 1;
    return nth;
#else
    (void) nth;
    return 1;
#endif
}

/* The BLAS R was linked with, told by the thread-control functions it
   exports (R links whichever BLAS the system provides, so they are looked
   up at run time, as threadpoolctl and RhpcBLASctl do): OpenBLAS, BLIS or
   MKL, each with threads of its own; otherwise a BLAS without threads (the
   reference BLAS, or one whose threads cannot be controlled, which is then
   left alone). A threaded BLAS is given whole blocks from one thread with
   `threads` threads of its own, and pinned to one thread while rff's own
   threads run (they may call it, e.g. for wide inputs), so that the two
   levels never run at once. */
typedef int (*int_void_fn)(void);
typedef void (*void_int_fn)(int);
typedef int64_t (*i64_void_fn)(void);
typedef void (*void_i64_fn)(int64_t);

static int blas_kind = RFF_BLAS_PLAIN;
static int_void_fn openblas_get, mkl_get;
static void_int_fn openblas_set, mkl_set;
static i64_void_fn blis_get;
static void_i64_fn blis_set;

static void blas_detect(void)
{
#ifndef _WIN32
    /* function pointers from dlsym's object pointers, through memcpy as
       POSIX allows */
#define RFF_DLSYM(var, name) do { void *p_ = dlsym(RTLD_DEFAULT, name); \
        memcpy(&var, &p_, sizeof var); } while (0)
    RFF_DLSYM(openblas_get, "openblas_get_num_threads");
    RFF_DLSYM(openblas_set, "openblas_set_num_threads");
    RFF_DLSYM(blis_get, "bli_thread_get_num_threads");
    RFF_DLSYM(blis_set, "bli_thread_set_num_threads");
    RFF_DLSYM(mkl_get, "MKL_Get_Max_Threads");
    RFF_DLSYM(mkl_set, "MKL_Set_Num_Threads");
#undef RFF_DLSYM
    if (openblas_get && openblas_set) blas_kind = RFF_BLAS_OPENBLAS;
    else if (blis_get && blis_set) blas_kind = RFF_BLAS_BLIS;
    else if (mkl_get && mkl_set) blas_kind = RFF_BLAS_MKL;
#endif
}

int rff_blas_kind(void) { return blas_kind; }

/* The BLAS's threads now (1 for a BLAS without threads). */
int rff_blas_get_threads(void)
{
    int n = 1;
    switch (blas_kind) {
    case RFF_BLAS_OPENBLAS: n = openblas_get(); break;
    case RFF_BLAS_BLIS: n = (int) blis_get(); break;
    case RFF_BLAS_MKL: n = mkl_get(); break;
    default: break;
    }
    return n < 1 ? 1 : n;
}

/* Sets the BLAS's threads, returning the previous number; does nothing
   (and returns 1) for a BLAS without threads. */
int rff_blas_set_threads(int n)
{
    int prev = rff_blas_get_threads();
    if (n < 1) n = 1;
    if (n == prev) return prev;
    switch (blas_kind) {
    case RFF_BLAS_OPENBLAS: openblas_set(n); break;
    case RFF_BLAS_BLIS: blis_set((int64_t) n); break;
    case RFF_BLAS_MKL: mkl_set(n); break;
    default: break;
    }
    return prev;
}

/* One BLAS call held at one BLAS thread, the previous count restored after
   it, as wherever rff calls the BLAS (syrk_blocks() in ridge.c says why). */
void rff_dgemm1(const char *ta, const char *tb, int m, int n, int k,
                const double *a, int lda, const double *b, int ldb,
                double beta, double *c, int ldc)
{
    const double one = 1.0;
    int prev = rff_blas_set_threads(1);
    F77_CALL(dgemm)(ta, tb, &m, &n, &k, &one, a, &lda, b, &ldb, &beta, c, &ldc
                    FCONE FCONE);
    rff_blas_set_threads(prev);
}

void rff_dsyrk1(const char *uplo, const char *trans, int n, int k,
                const double *a, int lda, double beta, double *c, int ldc)
{
    const double one = 1.0;
    int prev = rff_blas_set_threads(1);
    F77_CALL(dsyrk)(uplo, trans, &n, &k, &one, a, &lda, &beta, c, &ldc
                    FCONE FCONE);
    rff_blas_set_threads(prev);
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

/* What a routine asked for `threads` would do: the interrupt checks made so
   far in this process, the threads it would use, whether this is a forked
   child, the BLAS found and its threads now; and arms the countdown to
   raise SIGINT at the after-th check from now (after = 0 disarms; the
   tests use it). */
SEXP rff_runtime_info(SEXP after, SEXP threads)
{
    double a = rff_as_double(after, "after");
    if (a < 0) rff_abort_arg("after", "`after` must be >= 0");
    static const char *const kinds[] = {"plain", "openblas", "blis", "mkl"};
    const char *nms[] = {"checks", "threads", "forked", "blas", "blas_threads", ""};
    SEXP out = PROTECT(Rf_mkNamed(VECSXP, nms));
    SET_VECTOR_ELT(out, 0, Rf_ScalarReal(checks_done));
    SET_VECTOR_ELT(out, 1, Rf_ScalarInteger(rff_threads(threads)));
    SET_VECTOR_ELT(out, 2, Rf_ScalarLogical(rff_in_forked_child()));
    SET_VECTOR_ELT(out, 3, Rf_mkString(kinds[blas_kind]));
    SET_VECTOR_ELT(out, 4, Rf_ScalarInteger(rff_blas_get_threads()));
    countdown = floor(a);
    UNPROTECT(1);
    return out;
}
