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
#' Option `rff.threads` sets the default number of threads.
#'
#' @keywords internal
#' @useDynLib rff, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
