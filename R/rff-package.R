# The package's help page and its compiled code (useDynLib).

#' rff: Random Fourier Features for Kernel Methods
#'
#' Approximates shift-invariant kernels by random Fourier features drawn from
#' the kernel's spectral measure (Rahimi and Recht, 2007), computed in C on
#' R's own BLAS and random number generator.
#'
#' Main functions: [rff_map()] draws a feature map, [rff_features()] applies
#' it to data, [rff_kernel()] computes the exact kernel it approximates.
#' Models: [rff_ridge()] fits kernel ridge regression on random features by
#' streaming the rows (with defaults chosen from the data: standardized
#' inputs, the lengthscale and lambda by leave-one-out cross-validation, D
#' from the number of rows), [rff_cv()] cross-validates lambda and the
#' lengthscale (`lambda_min`, `lambda_1se`), [rff_stats()] gives the
#' mergeable statistics of row blocks; [predict.rff_ridge()] gives
#' predictions at any lambda, standard errors and intervals.
#' Beyond i.i.d. frequencies: orthogonal and quasi-Monte Carlo samplers
#' ([rff_samplers]), the arc-cosine kernels ([rff_arccos]), user-defined
#' spectral measures ([rff_spectral()]) and the median heuristic for the
#' lengthscale ([rff_median_lengthscale()]).
#' Errors from bad arguments have class `"rff_error"` (see [rff_error]).
#'
#' Options: `rff.threads` sets the default number of threads;
#' `rff.blas_hint = FALSE` silences the once-per-session message that
#' suggests an optimized BLAS when Z'Z takes long on the reference BLAS;
#' `rff.max_gb` caps the size in GB of any result the package allocates,
#' copies it holds at once included (default: the memory the process can
#' take when the call starts, where Linux tells it: the available memory,
#' and what the address-space limit `ulimit -v` leaves; at most the physical
#' memory), so that an impossible request fails with an `rff_error` naming
#' the argument and the size before anything is allocated. A GLM's feature
#' cache (`cache_mb`) is skipped, and the features streamed, when it would
#' not fit.
#'
#' @keywords internal
#' @useDynLib rff, .registration = TRUE, .fixes = "C_"
"_PACKAGE"
