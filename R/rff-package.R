#' rff: Random Fourier Features for Kernel Methods
#'
#' Approximates shift-invariant kernels by random Fourier features drawn from
#' the kernel's spectral measure (Rahimi and Recht, 2007), computed in C on
#' R's own BLAS and random number generator.
#'
#' Main functions: [rff_map()] draws a feature map, [rff_features()] applies
#' it to data, [rff_kernel()] computes the exact kernel it approximates.
#' Beyond i.i.d. frequencies: orthogonal and quasi-Monte Carlo samplers
#' ([rff_samplers]), the arc-cosine kernels ([rff_arccos]), user-defined
#' spectral measures ([rff_spectral()]) and the median heuristic for the
#' lengthscale ([rff_median_lengthscale()]).
#' Errors from bad arguments have class `"rff_error"` (see [rff_error]).
#'
#' Options: `rff.threads` sets the default number of threads;
#' `rff.max_gb` caps the size in GB of any result the package allocates
#' (default: the machine's physical memory where it can be read), so that an
#' impossible request fails with an `rff_error` before anything is
#' allocated.
#'
#' @keywords internal
#' @useDynLib rff, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
