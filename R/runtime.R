# Layer 1 (foundations): the machine a call runs on: thread counts, cores and
# memory, the size checks made before anything large is allocated, rows per
# streamed chunk and optional packages.

check_threads <- function(threads) {
  sync_products()
  if (is.null(threads)) return(default_threads())
  check_count(threads, "threads", lo = 1, hi = 1024)
}

# options(rff.products), else the environment variable RFF_PRODUCTS:
# "auto" (the default) runs the large products on rff's own kernel where
# it is known to be right and faster (own_products_trusted()), "blas"
# always on the BLAS, "rff" on the kernel wherever the processor runs it,
# whatever the BLAS. Handed to the C code when it changes, by every call
# that checks its `threads`.
sync_products <- function() {
  opt <- products_setting()
  if (!identical(products_state$opt, opt)) {
    .Call(C_rff_set_own_products, opt == "rff" || (opt == "auto" && own_products_trusted()))
    products_state$opt <- opt
  }
  invisible(opt)
}

products_setting <- function() {
  opt <- getOption("rff.products")
  what <- "`options(rff.products)`"
  if (is.null(opt)) {
    opt <- Sys.getenv("RFF_PRODUCTS", "auto")
    if (!nzchar(opt)) opt <- "auto"
    what <- "the environment variable RFF_PRODUCTS"
  }
  if (!(is.character(opt) && length(opt) == 1L && opt %in% c("auto", "blas", "rff"))) {
    rff_abort("options(rff.products)", what, " must be \"auto\", \"blas\" or \"rff\", got ",
              deparse1(opt))
  }
  opt
}

# Whether "auto" may run products on rff's own kernel: under the reference
# BLAS (R's libRblas or the netlib libblas, told by its library's path) and
# under OpenBLAS (its narrow products), where the kernel is tested against
# the BLAS; not under a BLAS the detection does not know (Accelerate,
# ATLAS, a renamed optimized library, Windows' Rblas.dll), which gets R's
# BLAS. Asked once per session.
own_products_trusted <- function() {
  if (is.null(products_state$trusted)) {
    kind <- .Call(C_rff_blas_found)$blas
    products_state$trusted <- kind == "openblas" ||
      (kind == "plain" && is_reference_blas(blas_path()))
  }
  products_state$trusted
}

# R's own BLAS (libRblas) or the reference libblas, not an optimized one.
is_reference_blas <- function(path) {
  if (!is.character(path) || length(path) != 1L || !nzchar(path)) return(FALSE)
  base <- basename(path)
  !grepl("openblas|mkl|blis|atlas|accelerate|veclib|armpl|flexiblas", path, ignore.case = TRUE) &&
    grepl("^libR?blas", base)
}

blas_path <- function() {
  p <- tryCatch(unname(extSoftVersion()["BLAS"]), error = function(e) "")
  if (length(p) != 1L || is.na(p)) "" else p
}

products_state <- new.env(parent = emptyenv())

# The default `threads`: options(rff.threads), else the cores (at most 2
# under _R_CHECK_LIMIT_CORES_) less those other processes are running on
# now (`busy`, from busy_cores()), at least one. A thread on a core
# another process keeps busy costs more than it brings: OpenMP's threads wait for each
# other by spinning, and the spinning takes the core from the call itself
# (quakes' default fit with a CPU hog on one of 2 cores: 1.33 times the
# time of threads = 1 with both threads, 1.00 with the threads waiting
# passively). Results do not depend on the number of threads.
default_threads <- function(busy = busy_cores()) {
  opt <- getOption("rff.threads")
  if (!is.null(opt)) return(check_count(opt, "options(rff.threads)", lo = 1, hi = 1024))
  n <- detected_cores()
  limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(limit) && !identical(tolower(limit), "false")) n <- min(n, 2L)
  as.integer(max(1L, n - busy))
}

# The cores other processes are running on now (Linux; 0 elsewhere): the
# least of up to three reads of running_others(), 1 ms apart.
# /proc/loadavg counts the whole machine: on one shared through CPU sets,
# tasks on cores this process cannot use count too (there, give `threads`
# or options(rff.threads)).
busy_cores <- function() {
  if (!file.exists("/proc/loadavg")) return(0L)
  read_once <- function() {
    stats <- file.path(list.files("/proc/self/task", full.names = TRUE), "stat")
    states <- vapply(stats, function(f) {
      task_state(tryCatch(readLines(f, n = 1L, warn = FALSE), error = function(e) "",
                          warning = function(w) ""))
    }, "")
    running_others(readLines("/proc/loadavg", n = 1L, warn = FALSE), states)
  }
  busy <- tryCatch({
    b <- read_once()
    # a core seen busy is read again 1 and 2 ms later: a task that ran for
    # an instant (1 read in 150 on a quiet machine) is not a busy core
    for (i in 1:2) if (b > 0) {
      Sys.sleep(0.001)
      b <- min(b, read_once())
    }
    b
  }, error = function(e) NA_integer_, warning = function(w) NA_integer_)
  if (length(busy) != 1L || is.na(busy)) 0L else max(0L, as.integer(busy))
}

# The tasks other processes are running: the running tasks of a line of
# /proc/loadavg (its fourth field, "running/total") less this process's own
# running threads (`states`, one letter a thread, "R" running), at least
# the one reading.
running_others <- function(loadavg, states) {
  f <- strsplit(loadavg, " ", fixed = TRUE)[[1L]]
  running <- suppressWarnings(as.integer(sub("/.*$", "", f[4L])))
  running - max(sum(states == "R"), 1L)
}

# The state letter of a line of /proc/<pid>/task/<tid>/stat: the field
# after the command name, which is in parentheses and may hold spaces and
# parentheses itself.
task_state <- function(line) {
  if (length(line) != 1L || !grepl(") ", line, fixed = TRUE)) return("")
  substr(sub("^.*\\) ", "", line), 1L, 1L)
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
# memory_limit_gb(). `what`: the object, as the user knows it ("the
# features"), named in the refusal.
check_alloc <- function(n, D, arg = "D", copies = 1, what = "the result") {
  cells <- as.double(n) * D
  if (cells > 2^52) {
    rff_abort(arg, sprintf("`%s` is too large: %s (%s x %s) cannot be allocated", arg, what,
                           format(n), format(D)))
  }
  gb <- cells * copies * 8 / 2^30
  limit <- getOption("rff.max_gb", memory_limit_gb())
  if (gb > limit) {
    rff_abort(arg, sprintf(
      "`%s` is too large: %s (%s x %s%s) would need %s GB, more than the %s GB allowed (options(rff.max_gb); by default the memory available)",
      arg, what, format(n), format(D), if (copies == 1) "" else sprintf(", %s copies", format(copies)),
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
  check_alloc(D, D, arg = if (map_given) "map" else "D", copies = copies,
              what = "the cross-products Z'Z and the solver's copies of them")
}

check_chunk_size <- function(chunk_size, D) {
  if (is.null(chunk_size)) return(default_chunk_size(D))
  check_count(chunk_size, "chunk_size", lo = 1)
}

# About 16 MB of features per block, and at least one featurization block.
default_chunk_size <- function(D) as.integer(max(256, floor(2^21 / D)))

has_package <- function(pkg) requireNamespace(pkg, quietly = TRUE)
