# Layer 2 (kernel parameters): the BLAS rff found (rff_blas_info()) and the
# one-time hint that points users of the reference BLAS to a faster one.

#' The BLAS rff runs on, and how it shares the cores with rff's threads
#'
#' R uses whichever BLAS the system provides: the reference BLAS (one
#' thread), or a threaded one such as OpenBLAS, BLIS or MKL, which starts
#' threads of its own inside every call. rff finds it when the package is
#' loaded, from the thread-control functions it exports, and never runs the
#' two levels of threads at once. `threads` is the number of cores a call
#' uses under every BLAS, and results are identical for every value of
#' `threads`:
#' \describe{
#'   \item{OpenBLAS and BLIS (`split = "blas"`)}{rff's threads featurize row
#'     blocks, with the BLAS held at one thread; the products Z'Z (and ZZ'
#'     of the error study and of a fit on fewer rows than features) are then
#'     handed whole, from one thread, to the BLAS
#'     running `threads` threads of its own. These libraries share out the
#'     entries of a product among their threads, never its inner sums, so the
#'     result does not depend on their thread count.}
#'   \item{The reference BLAS and MKL (`split = "blocks"`)}{rff's threads
#'     featurize row blocks and also share the products, as column blocks of
#'     a fixed partition (`dsyrk` on the diagonal blocks, `dgemm` above
#'     them), each on one BLAS thread. MKL's rounding may change with its
#'     thread count, which this partition avoids.}
#' }
#'
#' **rff's own product kernel** (`products = "rff"`). R's reference BLAS
#' forms each entry of a product as a separate scalar loop, at about 3
#' GF/s per core on a current x86-64 processor. Where the BLAS is that one
#' (`blas = "plain"`) and the processor has AVX2 and FMA, the products
#' above (Z'Z, ZZ', the projections of leave-one-out, the GLM's Z B and
#' Z'R, the back transformation of an eigendecomposition) run instead on a
#' kernel of rff's own, blocked for the caches and registers as optimized
#' BLAS libraries are, at about 40 GF/s per core (on 512-bit registers where
#' the processor has AVX-512F, outside Windows: about 50 on a Zen 5 core,
#' with the same sums); each entry is summed in a fixed order, so results
#' still do not depend on `threads`. The default
#' fit on 40,455 rows of ggplot2::diamonds went from 53 to 9 s (reference
#' BLAS, 2 cores). Under OpenBLAS the narrow products of a GLM pass on
#' cached features (Z B and Z'R, one column per class, at most 64; every
#' fit over a lambda path, where the solver works in the preconditioner's
#' basis) run on the kernel too: it reads the features where they lie,
#' whereas OpenBLAS copies them for every block of 128 rows. On 16,000 x
#' 1,224 features and 26 classes, one core: 40-42 ms against 43-45 for Z
#' B, and 33-35 ms against 43-44 for Z'R. A pass on features streamed
#' from the rows stays on OpenBLAS. `options(rff.products = "blas")` keeps every product on
#' the BLAS; results then differ by rounding only. Set it when R runs on an
#' optimized BLAS that rff cannot tell from the reference one (Apple's
#' Accelerate, ATLAS, or an optimized `Rblas.dll` on Windows, where rff
#' looks for no BLAS's thread controls): those are as fast as the kernel or
#' faster. LAPACK's own steps (the
#' Cholesky factorization, the tridiagonalization of an eigenproblem) still
#' run on the BLAS, where OpenBLAS remains faster.
#'
#' Other products are shared as fixed column blocks under every BLAS (the
#' error study's Z_x Z_y', and Z'U of a fit on fewer rows than features), run inside rff's threads on one BLAS thread
#' ([rff_glm()]'s products of each row block), or are small and run on one
#' BLAS thread (predictions). A threaded
#' BLAS is given back its own setting after every call (also after an
#' interrupt). LAPACK's Cholesky solve of the D x D system (`dpotrf`) and
#' the tridiagonalization of an eigendecomposition (`dsytrd`) run outside
#' rff's threads with the BLAS's own setting (`OPENBLAS_NUM_THREADS`,
#' `MKL_NUM_THREADS`, ...); the eigenvectors' back transformation
#' (`dormtr`) runs in one call on the BLAS's own threads under OpenBLAS and
#' BLIS, and otherwise (the reference BLAS, MKL) in fixed panels of 64
#' columns among rff's threads with the BLAS on one thread (each further
#' thread holding a copy of the n x n reflectors, at most 256 MB of them).
#'
#' Nested threads were the trap this avoids: with OpenBLAS on two cores, a
#' BLAS with two threads called from each of two rff threads made a ridge fit
#' about three times slower than either level alone.
#'
#' **Which products, and why** (the field `why`, printed as one line):
#' \tabular{ll}{
#'   BLAS found \tab the large products run on \cr
#'   the reference BLAS (its library's path: `libRblas` or a `libblas`
#'     outside the folders of OpenBLAS, BLIS, MKL, ATLAS, Accelerate,
#'     FlexiBLAS) \tab rff's own kernel, where the processor has AVX2 and
#'     FMA (x86-64, outside Windows); else the BLAS \cr
#'   OpenBLAS \tab OpenBLAS; a GLM pass's narrow products on rff's kernel,
#'     where it runs \cr
#'   BLIS, MKL, FlexiBLAS (whatever its backend) \tab the BLAS \cr
#'   any other (Accelerate, ATLAS, an optimized library under another
#'     name, Windows' `Rblas.dll`) \tab the BLAS \cr
#' }
#' The kernel is not compiled on Windows (its gcc does not align the stack
#' for the spills of wide registers) nor off x86-64; there every product
#' runs on R's BLAS. `options(rff.products = "blas")`, or the environment
#' variable `RFF_PRODUCTS=blas` when the option is unset, keeps every
#' product on the BLAS; `"rff"` runs the kernel wherever the processor
#' runs it, whatever the BLAS; `"auto"` (the default) follows the table.
#' Results of the two paths differ by rounding only (tested in
#' `make test`, with the kernel off for a sample of every model).
#'
#' @param threads The `threads` argument of a call, as there (default
#'   `getOption("rff.threads")`, else all cores less those other processes
#'   are running on now).
#' @return A list of class `"rff_blas_info"`: `blas` (`"openblas"`,
#'   `"blis"`, `"mkl"`, `"flexiblas"`, or `"plain"` for a BLAS whose threads rff cannot see:
#'   the reference BLAS, or another single-threaded one), `blas_threads` (the
#'   BLAS's own thread setting, used outside rff's calls), `threads` (the
#'   threads a call with this `threads` uses: at most the number of
#'   processors and OpenMP's thread limit (`OMP_THREAD_LIMIT`), and one in a
#'   forked child process), `split` (`"blas"` or
#'   `"blocks"`, as above), `products` (`"rff"` when the large products run
#'   on rff's own kernel, else `"blas"`; under OpenBLAS `"blas"`, with the
#'   GLM's narrow products on the kernel when it runs and `rff.products` is
#'   `"auto"`) and `forked` (whether this process
#'   is a forked child of the one that loaded rff), `library` (the BLAS
#'   library's path, from [extSoftVersion()]) and `why` (one line: which
#'   products and why, as in the table above).
#' @examples
#' rff_blas_info()
#' @export
rff_blas_info <- function(threads = NULL) {
  threads <- check_threads(threads)
  info <- .Call(C_rff_runtime_info, 0, threads)
  found <- .Call(C_rff_blas_found)
  out <- info[c("blas", "blas_threads", "threads", "split", "products", "forked")]
  out$library <- blas_path()
  out$why <- products_reason(out$blas, out$products, found$kernel, products_setting(),
                             out$library)
  structure(out, class = "rff_blas_info")
}

# One line: which products the large products run on, and why (the
# decision table of ?rff_blas_info).
products_reason <- function(blas, products, kernel, setting, library) {
  lib <- if (nzchar(library)) basename(library) else "R's BLAS"
  if (identical(products, "rff")) {
    return(sprintf("rff's own kernel (%s, on an x86-64 processor with AVX2 and FMA)",
                   if (setting == "rff") "options(rff.products) or RFF_PRODUCTS is \"rff\""
                   else sprintf("%s is the reference BLAS", lib)))
  }
  narrow <- blas == "openblas" && kernel && setting != "blas"
  why <- if (setting == "blas") {
    "options(rff.products) or RFF_PRODUCTS is \"blas\""
  } else if (!kernel) {
    "rff's own kernel needs an x86-64 processor with AVX2 and FMA, outside Windows"
  } else if (blas == "plain") {
    sprintf("%s is not the reference BLAS as far as rff can tell; an optimized one is as fast", lib)
  } else {
    sprintf("%s runs its own threads", blas_label(blas))
  }
  sprintf("the BLAS (%s)%s", why,
          if (narrow) "; a GLM pass's narrow products on rff's own kernel" else "")
}

blas_label <- function(blas) {
  switch(blas, openblas = "OpenBLAS", blis = "BLIS", mkl = "MKL", flexiblas = "FlexiBLAS",
         plain = "a single-threaded BLAS (reference or unknown)", blas)
}

#' @export
print.rff_blas_info <- function(x, ...) {
  name <- blas_label(x$blas)
  plural <- function(k) sprintf("%d thread%s", k, if (k == 1L) "" else "s")
  cat(sprintf("<rff_blas_info> %s%s\n", name,
              if (x$blas == "plain") "" else sprintf(", %s of its own", plural(x$blas_threads))))
  how <- if (identical(x$products, "rff")) {
    sprintf("%s for features and for column blocks of the products, on rff's own kernel",
            plural(x$threads))
  } else if (identical(x$split, "blas")) {
    sprintf("%s for features; Z'Z handed whole to the BLAS on %s", plural(x$threads),
            plural(x$threads))
  } else {
    sprintf("%s for features and for column blocks of Z'Z, the BLAS on one thread within them",
            plural(x$threads))
  }
  cat(sprintf("  rff's calls: %s%s\n", how,
              if (x$forked) " (a forked child: one thread)" else ""))
  if (!is.null(x$why)) cat(sprintf("  products: %s\n", x$why))
  invisible(x)
}

# One message per session when streaming into Z'Z took more than
# `getOption("rff.blas_hint_seconds", 10)` seconds on R's reference BLAS,
# pointing to the README's section on OpenBLAS; options(rff.blas_hint =
# FALSE) silences it. `blas` is the BLAS library's path (blas_path());
# `own`, whether the products ran on rff's own kernel (rff_blas_info()),
# where an optimized BLAS would not be much faster and nothing is shown.
blas_hint <- function(elapsed, blas = NULL, own = NULL) {
  if (!(elapsed > getOption("rff.blas_hint_seconds", 10))) return(invisible(FALSE))
  if (isFALSE(getOption("rff.blas_hint", TRUE)) || isTRUE(blas_state$hinted)) {
    return(invisible(FALSE))
  }
  if (is.null(own)) own <- .Call(C_rff_set_own_products, NA)
  if (isTRUE(own)) return(invisible(FALSE))
  if (is.null(blas)) blas <- blas_path()
  if (!is_reference_blas(blas)) return(invisible(FALSE))
  blas_state$hinted <- TRUE
  message(sprintf(paste0(
    "rff: Z'Z took %.0f s on R's reference BLAS (%s). An optimized BLAS such as ",
    "OpenBLAS is typically 4 to 8 times faster here: see \"Getting the faster BLAS\" ",
    "in rff's README. (Shown once per session; options(rff.blas_hint = FALSE) ",
    "silences it.)"), elapsed, blas))
  invisible(TRUE)
}

blas_state <- new.env(parent = emptyenv())

