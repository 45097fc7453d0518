# Layer 1 (foundations): the machine a call runs on: thread counts, cores and
# memory, the size checks made before anything large is allocated, rows per
# streamed chunk, optional packages, and the one progress display.

check_threads <- function(threads) {
  if (is.null(threads)) return(default_threads())
  check_count(threads, "threads", lo = 1, hi = 1024)
}

default_threads <- function() {
  opt <- getOption("rff.threads")
  if (!is.null(opt)) return(check_count(opt, "options(rff.threads)", lo = 1, hi = 1024))
  n <- detected_cores()
  limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(limit) && !identical(tolower(limit), "false")) n <- min(n, 2L)
  as.integer(n)
}

# parallel::detectCores() starts a shell on some platforms, and the memory
# size needs a file read: ask once per session.
cores_cache <- new.env(parent = emptyenv())

detected_cores <- function() {
  if (is.null(cores_cache$n)) {
    n <- parallel::detectCores(logical = TRUE)
    cores_cache$n <- if (is.na(n) || n < 1L) 1L else as.integer(n)
  }
  cores_cache$n
}

# Total physical memory in GB where the system tells it (Linux), else Inf.
physical_memory_gb <- function() {
  if (is.null(cores_cache$mem_gb)) {
    kb <- tryCatch({
      line <- grep("^MemTotal:", readLines("/proc/meminfo", n = 5L, warn = FALSE), value = TRUE)
      as.numeric(gsub("[^0-9]", "", line))
    }, error = function(e) NA_real_, warning = function(w) NA_real_)
    cores_cache$mem_gb <- if (length(kb) == 1L && is.finite(kb) && kb > 0) kb / 2^20 else Inf
  }
  cores_cache$mem_gb
}

# The memory this process can still take now, in GB (Linux; Inf where it
# cannot be read): the system's available memory (MemAvailable), and what
# is left of the address-space limit (ulimit -v) beyond the process's size.
available_memory_gb <- function() {
  read_kb <- function(file, key) {
    line <- tryCatch(grep(paste0("^", key, ":"), readLines(file, warn = FALSE), value = TRUE),
                     error = function(e) character(), warning = function(w) character())
    if (length(line) != 1L) return(NA_real_)
    as.numeric(gsub("[^0-9]", "", line))
  }
  avail <- read_kb("/proc/meminfo", "MemAvailable") / 2^20
  if (!is.finite(avail)) avail <- Inf
  lim <- tryCatch({
    line <- grep("^Max address space", readLines("/proc/self/limits", warn = FALSE), value = TRUE)
    suppressWarnings(as.numeric(strsplit(trimws(sub("^Max address space", "", line)), " +")[[1L]][1L]))
  }, error = function(e) NA_real_, warning = function(w) NA_real_)
  if (length(lim) == 1L && is.finite(lim)) {
    used <- read_kb("/proc/self/status", "VmSize") * 1024
    if (is.finite(used)) avail <- min(avail, max(lim - used, 0) / 2^30)
  }
  avail
}

# The default limit of check_alloc(): the physical memory, and no more than
# the process can take now.
memory_limit_gb <- function() min(physical_memory_gb(), available_memory_gb())

# An n x D result (`copies` of it held at once) must be allocatable: stop
# before asking for it. The limit is options(rff.max_gb), by default
# memory_limit_gb().
check_alloc <- function(n, D, arg = "D", copies = 1) {
  cells <- as.double(n) * D
  if (cells > 2^52) {
    rff_abort(arg, sprintf("`%s` is too large: a %s x %s result cannot be allocated", arg, n, D))
  }
  gb <- cells * copies * 8 / 2^30
  limit <- getOption("rff.max_gb", memory_limit_gb())
  if (gb > limit) {
    rff_abort(arg, sprintf(
      "`%s` is too large: the %s x %s result%s needs %s GB, more than the %s GB allowed (options(rff.max_gb); by default the memory available)",
      arg, format(n), format(D), if (copies == 1) "" else sprintf(" (%s copies)", format(copies)),
      format(gb, digits = 3), format(limit, digits = 3)))
  }
  invisible(TRUE)
}

# Whether an n x D matrix fits in the memory limit (for optional caches).
fits_in_memory <- function(n, D) {
  as.double(n) * D * 8 / 2^30 <= getOption("rff.max_gb", memory_limit_gb())
}

# The D x D statistics (and the solves' copies of them) must fit in memory:
# refuse before drawing features. `copies` counts the D x D matrices held.
check_stats_memory <- function(D, copies, map_given) {
  check_alloc(D, as.double(D) * copies, arg = if (map_given) "map" else "D")
}

check_chunk_size <- function(chunk_size, D) {
  if (is.null(chunk_size)) return(default_chunk_size(D))
  check_count(chunk_size, "chunk_size", lo = 1)
}

# About 16 MB of features per block, and at least one featurization block.
default_chunk_size <- function(D) as.integer(max(256, floor(2^21 / D)))

has_package <- function(pkg) requireNamespace(pkg, quietly = TRUE)

#' Progress reports of long fits
#'
#' Fits that stream many blocks of rows ([rff_ridge()], [rff_stats()]), the
#' cross-validations of [rff_cv()] and [rff_glm()], and
#' [rff_stats_apply()] report progress when `progress = TRUE` (the default
#' in interactive sessions). They report through the progressr package
#' when it is installed and its global handlers are on
#' (`progressr::handlers(global = TRUE)`), so the user's choice of
#' `progressr::handlers()` is honoured (a bar, a beep, a notification;
#' [rff_stats_apply()] reports as each chunk's statistics come back from
#' its cluster or `future` workers); otherwise they show a text bar
#' ([utils::txtProgressBar()]). `progress = FALSE` silences
#' both. The option `rff.progress` chooses: `"auto"` (the default, as
#' above), `"progressr"` (always progressr, for example inside
#' `progressr::with_progress()`) or `"txt"` (always the text bar).
#' progressr itself reports only while `getOption("progressr.enable")` is
#' `TRUE` (by default in interactive sessions).
#'
#' @name rff_progress
#' @examples
#' if (requireNamespace("progressr", quietly = TRUE)) {
#'   x <- matrix(rnorm(2000), 1000, 2)
#'   old <- options(rff.progress = "progressr", progressr.enable = TRUE)
#'   progressr::with_progress(
#'     s <- rff_stats(x, x[, 1], map = rff_map(2, D = 20), chunk_size = 100,
#'                    progress = TRUE))
#'   options(old)
#' }
NULL

# The one progress display of a call, from 0 to `max` when `show`, else
# nothing. `set(v)` moves it to v, `close()` ends it; callers register
# `on.exit(pb$close(), add = TRUE)`, beside their other exit work. It goes
# through progressr (the user's handlers()) when progress_backend() says so,
# else it is a text bar.
progress_bar <- function(show, max) {
  if (!isTRUE(show)) return(list(set = function(v) invisible(NULL), close = function() invisible(NULL)))
  if (progress_backend() == "progressr") {
    p <- progressr::progressor(steps = max, on_exit = FALSE)
    at <- 0
    return(list(set = function(v) {
      if (v > at) p(amount = v - at)
      at <<- max(at, v)
      invisible(NULL)
    }, close = function() p(type = "finish")))
  }
  pb <- utils::txtProgressBar(min = 0, max = max, style = 3)
  list(set = function(v) utils::setTxtProgressBar(pb, v), close = function() close(pb))
}

# "progressr" or "txt": option rff.progress ("auto", the default, is
# progressr when it is installed and its global handlers are on).
progress_backend <- function() {
  opt <- getOption("rff.progress", "auto")
  if (!is.character(opt) || length(opt) != 1L || !opt %in% c("auto", "progressr", "txt")) {
    rff_abort("rff.progress", sprintf(
      "option `rff.progress` must be \"auto\", \"progressr\" or \"txt\", got %s", show_value(opt)))
  }
  if (opt == "txt") return("txt")
  if (!has_package("progressr")) {
    if (opt == "progressr") {
      rff_abort("rff.progress", "option `rff.progress` is \"progressr\" but the progressr package is not installed")
    }
    return("txt")
  }
  if (opt == "progressr" || isTRUE(progressr::handlers(global = NA))) "progressr" else "txt"
}
