# Benchmark: rff against the tools users would pick instead, side by side on
# the same data in one run. Run with `make bench` (installs the package and
# the peers first) or, with both in place, `Rscript bench/bench.R`.
#
# The parent process runs one child per (BLAS, threads) configuration: the
# machine's default BLAS and, when installed, Debian's OpenBLAS (pthread),
# each with 1 thread and with all cores. The OpenBLAS children get it through
# the library search path of that process only (R_LD_LIBRARY_PATH and
# LD_LIBRARY_PATH, see the README); the machine's default is not changed.
# Every child times rff, the plain-R idiom, bases::b_rff and (through
# bench/peers.py, same data files) scikit-learn, and reports the BLAS in use.
# The parent prints one table and writes bench/RESULTS.md; `Rscript
# bench/bench.R --report` rewrites it from the last run (after editing
# bench/notes.md, say).
#
# Environment: BENCH_REPS (timed repetitions per row, default 5; rows whose
# first call takes over 2 s use 3, cheap rows (median under 0.5 s) 11), BENCH_ONLY (comma-separated workload
# prefixes, e.g. "F1,F2"), BENCH_CONFIGS (e.g. "default-1,openblas-2"),
# BENCH_MERGE_WITH (an earlier .build/bench/table.rds whose rows for the
# workloads not measured now are kept, e.g. the long R1 rows).

lib <- file.path(getwd(), ".build", "lib")
openblas_dir <- "/usr/lib/x86_64-linux-gnu/openblas-pthread"
python <- "/usr/bin/python3"
out_dir <- file.path(getwd(), ".build", "bench")

args <- commandArgs(TRUE)

# ---------------------------------------------------------------- helpers ----

blas_in_use <- function() {
  si <- sessionInfo()
  b <- si$BLAS
  if (grepl("openblas", b, ignore.case = TRUE) || grepl("openblas", si$LAPACK, ignore.case = TRUE))
    paste0("OpenBLAS (", b, ")")
  else if (grepl("/blas/libblas", b)) paste0("reference BLAS (", b, ")")
  else b
}

# Median wall time of `reps` calls after one warm-up call, which also
# measures the peak of R's heap during a call (gc "max used" above the
# baseline), in MB.
time_call <- function(expr, reps, env = parent.frame()) {
  expr <- substitute(expr)
  invisible(gc(reset = TRUE))
  base <- sum(gc()[, 2])
  t0 <- proc.time()[["elapsed"]]
  res <- eval(expr, env)
  first <- proc.time()[["elapsed"]] - t0
  peak <- sum(gc()[, 6]) - base
  rm(res)
  if (first > 2) reps <- min(reps, 3L)
  one <- function() {
    invisible(gc())
    t0 <- proc.time()[["elapsed"]]
    res <- eval(expr, env)
    proc.time()[["elapsed"]] - t0
  }
  times <- vapply(seq_len(reps), function(r) one(), 0)
  # cheap calls: more of them, for a steadier median
  if (median(times) < 0.5 && reps < 11L) {
    times <- c(times, vapply(seq_len(11L - reps), function(r) one(), 0))
    reps <- 11L
  }
  list(median = median(times), peak = peak, reps = reps, first = first)
}

row <- function(workload, tool, threads, t, blas, note = "") {
  data.frame(workload = workload, tool = tool, threads = threads,
             median_s = if (is.null(t)) NA_real_ else t$median,
             peak_mb = if (is.null(t)) NA_real_ else t$peak,
             reps = if (is.null(t)) NA_integer_ else as.integer(t$reps),
             first_s = if (is.null(t) || is.null(t$first)) NA_real_ else t$first,
             blas = blas, note = note, stringsAsFactors = FALSE)
}

skipped <- function(workload, tool, threads, blas, why)
  row(workload, tool, threads, NULL, blas, note = paste("skipped:", why))

wanted <- function(workload) {
  only <- Sys.getenv("BENCH_ONLY")
  if (!nzchar(only)) return(TRUE)
  any(startsWith(workload, strsplit(only, ",")[[1]]))
}

# ------------------------------------------------------------------ child ----

# run_child(): in bench/bench-child.R
source(file.path("bench", "bench-child.R"))

# ----------------------------------------------------------------- parent ----

machine <- function() {
  cpu <- tryCatch(sub(".*:\\s*", "", grep("^Model name", system("lscpu", intern = TRUE), value = TRUE)[1]),
                  error = function(e) NA)
  mem <- tryCatch(round(as.numeric(sub("\\D+(\\d+).*", "\\1", readLines("/proc/meminfo", 1))) / 2^20, 1),
                  error = function(e) NA)
  sprintf("%s, %d cores, %s GB RAM, %s, %s", cpu, parallel::detectCores(), mem,
          R.version.string, utils::sessionInfo()$running)
}

ratio_table <- function(tab) {
  tab$ratio_to_rff <- NA_real_
  key <- paste(tab$workload, tab$threads, tab$config)
  for (k in unique(key)) {
    i <- which(key == k)
    r <- i[startsWith(tab$tool[i], "rff::")][1]
    if (!is.na(r) && !is.na(tab$median_s[r])) tab$ratio_to_rff[i] <- tab$median_s[i] / tab$median_s[r]
  }
  tab
}

targets <- function(tab) {
  get <- function(wl, tool, th, cfg, col = "median_s") {
    v <- tab[[col]][tab$workload == wl & startsWith(tab$tool, tool) & tab$threads == th & tab$config == cfg]
    if (length(v)) v[1] else NA_real_
  }
  out <- character()
  ncores <- parallel::detectCores()
  for (cfg in unique(tab$config)) {
    line <- function(what, value, goal, ok) {
      out <<- c(out, sprintf("| %s | %s | %s | %s | %s |", cfg, what, value, goal,
                             if (is.na(ok)) "not measured" else if (ok) "met" else "MISSED"))
    }
    r <- get("F1 phase", "rff::", 1, cfg) / get("F1 phase", "sklearn", 1, cfg)
    line("F1 phase, 1 thread: rff / RBFSampler", sprintf("%.2f", r), "<= 0.5", r <= 0.5)
    for (v in c("phase", "pair")) {
      r <- get(paste("F1", v), "plain R", 1, cfg) / get(paste("F1", v), "rff::", 1, cfg)
      line(sprintf("F1 %s, 1 thread: plain R / rff", v), sprintf("%.1fx", r), ">= 20x", r >= 20)
      r <- get(paste("F1", v), "rff::", 1, cfg) / get(paste("F1", v), "rff::", ncores, cfg)
      line(sprintf("F1 %s: rff 1 thread / %d threads", v, ncores), sprintf("%.2fx", r), ">= 1.7x", r >= 1.7)
    }
    for (th in unique(c(1, ncores))) {
      r <- get("F2 phase", "rff::", th, cfg) / get("F2 phase", "sklearn", th, cfg)
      line(sprintf("F2 phase, %d thread(s): rff / RBFSampler", th), sprintf("%.2f", r), "<= 0.7", r <= 0.7)
    }
    r <- get("R1 one lambda", "rff::", 1, cfg) / get("R1 one lambda", "floor", 1, cfg)
    line("R1, 1 thread: rff_ridge / (featurize + dsyrk + Cholesky)", sprintf("%.2f", r), "<= 1.15", r <= 1.15)
    r <- get("R1 path of 50", "rff::", 1, cfg) / get("R1 one lambda", "rff::", 1, cfg)
    line("R1, 1 thread: 50-lambda path / one lambda", sprintf("%.2f", r), "<= 1.2", r <= 1.2)
    r <- get("R1 auto lengthscale", "rff::", 1, cfg) / get("R1 path of 50", "rff::", 1, cfg)
    line("R1, 1 thread: lengthscale \"auto\" / one given lengthscale", sprintf("%.2f", r), "<= 3", r <= 3)
    r <- get("R1 one lambda", "rff::", 1, cfg, "peak_mb") / get("R1 one lambda", "plain R", 1, cfg, "peak_mb")
    line("R1: rff_ridge peak memory / plain R's", sprintf("%.1f%%", 100 * r), "<= 5%", r <= 0.05)
    t <- get("E1 kernel error", "rff::", ncores, cfg)
    line(sprintf("E1, %d threads", ncores), sprintf("%.2f s", t), "< 2 s", t < 2)
  }
  out
}

run_parent <- function() {
  ncores <- parallel::detectCores()
  configs <- list(
    list(name = "default", threads = 1L), list(name = "default", threads = ncores),
    list(name = "openblas", threads = 1L), list(name = "openblas", threads = ncores))
  pick <- Sys.getenv("BENCH_CONFIGS")
  if (nzchar(pick)) {
    keep <- strsplit(pick, ",")[[1]]
    configs <- Filter(function(cf) paste0(cf$name, "-", cf$threads) %in% keep, configs)
  }
  have_openblas <- file.exists(file.path(openblas_dir, "libblas.so.3"))
  if (!have_openblas) message("OpenBLAS configurations skipped: ", openblas_dir,
                              " not found (Debian package libopenblas0-pthread)")
  dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
  tabs <- list()
  for (cf in configs) {
    if (cf$name == "openblas" && !have_openblas) next
    env <- c(sprintf("OPENBLAS_NUM_THREADS=%d", cf$threads), sprintf("OMP_NUM_THREADS=%d", cf$threads))
    if (cf$name == "openblas") {
      env <- c(env, sprintf("R_LD_LIBRARY_PATH=%s:%s", openblas_dir, R.home("lib")),
               sprintf("LD_LIBRARY_PATH=%s", openblas_dir),
               sprintf("BENCH_PY_LD_LIBRARY_PATH=%s", openblas_dir))
    }
    outfile <- file.path(out_dir, sprintf("rows_%s_%d.rds", cf$name, cf$threads))
    unlink(outfile)
    message(sprintf("bench: %s BLAS, %d thread(s) ...", cf$name, cf$threads))
    status <- system2(file.path(R.home("bin"), "Rscript"), c("bench/bench.R", "--child", cf$threads, outfile),
                      env = env)
    if (status != 0 || !file.exists(outfile)) {
      message("bench: configuration failed: ", cf$name, " ", cf$threads)
      next
    }
    tab <- readRDS(outfile)
    tab$config <- cf$name
    tabs[[length(tabs) + 1]] <- tab
  }
  tab <- do.call(rbind, tabs)
  tab$run <- format(Sys.time(), tz = "UTC", usetz = FALSE)
  # BENCH_MERGE_WITH: an earlier table.rds whose rows for workloads this run
  # did not measure (first word, e.g. "R1", per BLAS) are kept, with their
  # run's date; ratios stay within one run
  old_file <- Sys.getenv("BENCH_MERGE_WITH")
  if (nzchar(old_file)) {
    old <- readRDS(old_file)
    if (is.null(old$run)) old$run <- format(attr(old, "when"), tz = "UTC", usetz = FALSE)
    old$ratio_to_rff <- NULL
    kind <- function(t) paste(t$config, sub(" .*", "", t$workload))
    old <- old[!kind(old) %in% kind(tab), names(tab)]
    tab <- rbind(tab, old)
  }
  tab <- ratio_table(tab)
  tab <- tab[order(tab$config, substr(tab$workload, 1, 2), tab$threads, tab$workload), ]
  attr(tab, "when") <- sort(unique(tab$run))
  attr(tab, "machine") <- machine()
  saveRDS(tab, file.path(out_dir, "table.rds"))
  write_report(tab)
}

# Prints the table and writes bench/RESULTS.md (with bench/notes.md,
# bench/RESULTS-ridge.md and bench/RESULTS-stats-apply.md appended) from a
# measured table; `Rscript
# bench/bench.R --report` does it again from the last run's table, e.g.
# after editing the notes.
write_report <- function(tab) {
  show <- data.frame(
    workload = tab$workload, tool = tab$tool, threads = tab$threads,
    `median s` = ifelse(is.na(tab$median_s), "", sprintf("%.3f", tab$median_s)),
    `ratio to rff` = ifelse(is.na(tab$ratio_to_rff), "", sprintf("%.2f", tab$ratio_to_rff)),
    `peak MB` = ifelse(is.na(tab$peak_mb), "", sprintf("%.0f", tab$peak_mb)),
    reps = ifelse(is.na(tab$reps), "", tab$reps),
    `first s` = ifelse(is.na(tab$first_s), "", sprintf("%.3f", tab$first_s)),
    run = tab$run,
    blas = tab$blas, note = tab$note, check.names = FALSE)
  print(show, right = FALSE, row.names = FALSE)
  tg <- targets(tab)
  cat("\nTargets\n", paste(tg, collapse = "\n"), "\n", sep = "")
  md <- c("# Benchmark results", "",
          sprintf("Produced by `make bench` (bench/bench.R) on %s UTC%s.",
                  paste(attr(tab, "when"), collapse = " and "),
                  if (length(attr(tab, "when")) > 1) " (column `run` tells which row is from which)" else ""),
          "", sprintf("Machine: %s.", attr(tab, "machine")), "",
          paste("Times are medians of repeated calls (count in `reps`) after one warm-up call,",
                "wall clock, including the allocation of the result; `first s` is that warm-up",
                "call, the first of its kind in the process. Ratios are taken within one",
                "run and one BLAS. Peak memory is the growth of the R heap (gc's max used) or of",
                "Python's traced allocations (tracemalloc, which sees numpy's buffers) during one call;",
                "memory outside those heaps (BLAS workspace) is not counted."), "",
          "| workload | tool | threads | median s | ratio to rff | peak MB | reps | first s | run | BLAS | note |",
          "|---|---|---|---|---|---|---|---|---|---|---|",
          sprintf("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |", show$workload, show$tool,
                  show$threads, show$`median s`, show$`ratio to rff`, show$`peak MB`, show$reps,
                  show$`first s`, show$run, show$blas, show$note),
          "", "## Targets", "", "| BLAS | target | measured | goal | |", "|---|---|---|---|---|", tg)
  # the analysis, threads beside the BLAS (bench/threads.R), the cost of
  # lengthscale "auto" (bench/auto.R), the ridge memory benchmark
  # (bench/ridge-memory.R), the fit from files (bench/stats-apply.R) and
  # kernel logistic / multinomial regression (bench/glm.R)
  for (notes in c("bench/notes.md", "bench/RESULTS-threads.md", "bench/RESULTS-auto.md",
                  "bench/RESULTS-ridge.md", "bench/RESULTS-stats-apply.md",
                  "bench/RESULTS-glm.md")) {
    if (file.exists(notes)) md <- c(md, "", readLines(notes))
  }
  writeLines(md, "bench/RESULTS.md")
  cat("\nwrote bench/RESULTS.md\n")
}

if (length(args) >= 1 && args[1] == "--child") {
  run_child(as.integer(args[2]), args[3])
} else if (length(args) >= 1 && args[1] == "--report") {
  write_report(readRDS(file.path(out_dir, "table.rds")))
} else {
  run_parent()
}
