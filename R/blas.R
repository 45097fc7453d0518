#' The BLAS rff runs on, and how it shares the cores with rff's threads
#'
#' R uses whichever BLAS the system provides: the reference BLAS (one
#' thread), or a threaded one such as OpenBLAS, BLIS or MKL, which starts
#' threads of its own inside every call. rff finds it when the package is
#' loaded, from the thread-control functions it exports, and never runs the
#' two levels of threads at once: its own threads (`threads`) featurize row
#' blocks and share the blocks of the products Z'Z and Z'y (`dsyrk` and
#' `dgemm` on column blocks of a fixed partition), and a threaded BLAS is
#' held at one thread while rff calls it, then given back its own setting.
#' So `threads` is the number of cores a call uses, under every BLAS, and
#' results are identical for every value of `threads`. LAPACK's solves of
#' the D x D system (`dpotrf`, `dsyevr`) run outside rff's threads with the
#' BLAS's own setting (`OPENBLAS_NUM_THREADS`, `MKL_NUM_THREADS`, ...).
#'
#' Nested threads were the trap this avoids: with OpenBLAS on two cores, a
#' BLAS with two threads called from each of two rff threads made a ridge fit
#' about three times slower than either level alone.
#'
#' @param threads The `threads` argument of a call, as there (default
#'   `getOption("rff.threads")`, else all cores).
#' @return A list of class `"rff_blas_info"`: `blas` (`"openblas"`,
#'   `"blis"`, `"mkl"`, or `"plain"` for a BLAS whose threads rff cannot see:
#'   the reference BLAS, or another single-threaded one), `blas_threads` (the
#'   BLAS's own thread setting, used outside rff's calls), `threads` (the
#'   threads a call with this `threads` uses: at most the number of
#'   processors, and one in a forked child process) and `forked` (whether
#'   this process is a forked child of the one that loaded rff).
#' @examples
#' rff_blas_info()
#' @export
rff_blas_info <- function(threads = NULL) {
  threads <- check_threads(threads)
  info <- .Call(C_rff_runtime_info, 0, threads)
  structure(info[c("blas", "blas_threads", "threads", "forked")], class = "rff_blas_info")
}

#' @export
print.rff_blas_info <- function(x, ...) {
  name <- switch(x$blas, openblas = "OpenBLAS", blis = "BLIS", mkl = "MKL",
                 plain = "a single-threaded BLAS (reference or unknown)")
  cat(sprintf("<rff_blas_info> %s%s\n", name,
              if (x$blas == "plain") "" else sprintf(", %d thread%s of its own", x$blas_threads,
                                                     if (x$blas_threads == 1L) "" else "s")))
  cat(sprintf("  rff's calls: %d thread%s for features and products, the BLAS on one thread within them%s\n",
              x$threads, if (x$threads == 1L) "" else "s",
              if (x$forked) " (a forked child: one thread)" else ""))
  invisible(x)
}
