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

# An n x D result must be allocatable: stop before asking for it. The limit
# is options(rff.max_gb), by default the machine's physical memory.
check_alloc <- function(n, D, arg = "D") {
  cells <- as.double(n) * D
  if (cells > 2^52) {
    rff_abort(arg, sprintf("`%s` is too large: a %s x %s result cannot be allocated", arg, n, D))
  }
  gb <- cells * 8 / 2^30
  limit <- getOption("rff.max_gb", physical_memory_gb())
  if (gb > limit) {
    rff_abort(arg, sprintf(
      "`%s` is too large: the %s x %s result needs %s GB, more than the %s GB allowed (options(rff.max_gb))",
      arg, n, D, format(gb, digits = 3), format(limit, digits = 3)))
  }
  invisible(TRUE)
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

# The one progress display of a call: a text bar from 0 to `max` when
# `show`, else nothing. `set(v)` moves it to v, `close()` ends it; callers
# register `on.exit(pb$close(), add = TRUE)`, beside their other exit work.
progress_bar <- function(show, max) {
  if (!isTRUE(show)) return(list(set = function(v) invisible(NULL), close = function() invisible(NULL)))
  pb <- utils::txtProgressBar(min = 0, max = max, style = 3)
  list(set = function(v) utils::setTxtProgressBar(pb, v), close = function() close(pb))
}
