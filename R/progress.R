# Layer 1 (foundations): progress displays: the one display of a whole fit,
# labelled by stage and with an estimate of the time left, its stages
# (nested ones share their parent's span), and the plain bar of calls that
# have one stage; through progressr or as text.

#' Progress reports of long fits
#'
#' [rff_ridge()], [rff_glm()] and [rff_cv()] show one progress display for
#' the whole call when `progress = TRUE` (the default in interactive
#' sessions): a line naming the stage being run (the lengthscale search and
#' its candidates, the statistics of the final fit, the cross-validation
#' over lambda), the share of the call's work done and, from 10% on, an
#' estimate of the time left. The shares are planned from the work each
#' stage does (rows times features for statistics, lambda values times
#' folds for cross-validation) and revised as the stages finish: a search
#' that ends early, or a lambda path stopped early, moves the display on.
#' [rff_stats()] and [rff_stats_apply()] called on their own count rows or
#' chunks.
#'
#' Displays go through the progressr package when it is installed and its
#' handlers listen: inside `progressr::with_progress()`, or with its global
#' handlers on (`progressr::handlers(global = TRUE)`). The user's choice of
#' `progressr::handlers()` is then honoured (a bar, a beep, a
#' notification; the stage and the time left are the progression's
#' message; [rff_stats_apply()] reports in the calling session as each
#' chunk's statistics come back from its cluster or `future` workers, and
#' [rff_glm_apply()] as each lambda of its path is done on them, so the
#' same handlers see them), and
#' no text is drawn; otherwise, as in a plain interactive call, they are a
#' text line. `progress = FALSE` silences both. The option `rff.progress`
#' chooses: `"auto"` (the default, as above), `"progressr"` (always
#' progressr, for example with handlers of the user's own
#' `withCallingHandlers()`) or `"txt"` (always the text display). The text
#' display of a fit appears after
#' `getOption("rff.progress_delay", 1)` seconds: a fit faster than that
#' shows nothing. progressr itself reports only while
#' `getOption("progressr.enable")` is `TRUE` (by default in interactive
#' sessions). An interrupt (Ctrl-C) or an error ends the display.
#'
#' @name rff_progress
#' @examples
#' if (requireNamespace("progressr", quietly = TRUE)) {
#'   x <- matrix(rnorm(2000), 1000, 2)
#'   old <- options(progressr.enable = TRUE)
#'   progressr::with_progress(
#'     s <- rff_stats(x, x[, 1], map = rff_map(2, D = 20), chunk_size = 100,
#'                    progress = TRUE))
#'   options(old)
#' }
NULL

# The display of the call being run (NULL when there is none).
progress_state <- new.env(parent = emptyenv())

# Opens the display of a fit (`what`: "rff_ridge", ...) when `show` and no
# display is open (an inner call of a fit shows nothing of its own). Returns
# the function that closes it, for on.exit(add = TRUE).
progress_call <- function(show, what) {
  if (!isTRUE(show) || !is.null(progress_state$call)) return(function() invisible(NULL))
  d <- new.env(parent = emptyenv())
  d$what <- what
  d$t0 <- proc.time()[["elapsed"]]
  d$done <- 0
  d$total <- 1
  d$shown <- 0
  d$label <- ""
  d$stack <- list()
  d$ids <- 0
  d$out <- progress_output(1000L)
  d$last <- -Inf
  progress_state$call <- d
  function() {
    if (identical(progress_state$call, d)) progress_state$call <- NULL
    d$out$close()
    invisible(NULL)
  }
}

# The call expects `units` more work after what is done (a plan, revised
# by the caller as it learns more).
progress_expect <- function(units) {
  d <- progress_state$call
  if (!is.null(d) && !length(d$stack)) d$total <- d$done + max(units, 0)
  invisible(NULL)
}

# Whether a call's display is open (stages report into it).
progress_active <- function() !is.null(progress_state$call)

# The call has `units` more work than it planned (a stage it did not know of).
progress_add <- function(units) {
  d <- progress_state$call
  if (!is.null(d) && !length(d$stack)) d$total <- d$total + max(units, 0)
  invisible(NULL)
}

# A stage of `units` steps labelled `label` (NULL: the rest of the plan): `set(v)` moves it to v of its
# units, `close()` ends it (callers register on.exit(st$close(), add =
# TRUE)). In an open call display, a stage at the top level takes `units`
# of the call's work (the plan grows when it had less left); a stage opened
# inside another spans what is left of its parent and adds its label to
# the parent's (`share` of it: a part of the parent's work). Without a call display, a stage with `show` is a bar of
# its own (progress_bar()), and nothing otherwise.
progress_stage <- function(label, units = NULL, show = FALSE, share = 1) {
  d <- progress_state$call
  if (is.null(d)) {
    pb <- progress_bar(show && !is.null(units) && units > 1, units)
    return(list(set = pb$set, close = pb$close))
  }
  # NULL: the rest of the call's plan
  if (is.null(units)) units <- d$total - d$done
  units <- max(units, 1e-12)
  depth <- length(d$stack)
  if (depth == 0L) {
    from <- d$done
    span <- units
    if (d$total < from + span) d$total <- from + span
    full <- label
  } else {
    parent <- d$stack[[depth]]
    from <- d$done
    span <- share * max(parent$from + parent$span - from, 0)
    full <- paste(parent$full, label, sep = ": ")
  }
  d$ids <- d$ids + 1
  id <- paste0("s", d$ids)
  d$stack[[depth + 1L]] <- list(id = id, from = from, span = span, full = full)
  d$label <- full
  progress_render(d)
  closed <- FALSE
  list(set = function(v) {
    if (closed) return(invisible(NULL))
    d$done <- max(d$done, from + span * min(max(v, 0), units) / units)
    d$label <- full
    progress_render(d)
  }, close = function() {
    if (closed) return(invisible(NULL))
    closed <<- TRUE
    d$done <- max(d$done, from + span)
    keep <- vapply(d$stack, function(s) s$id != id, TRUE)
    d$stack <- d$stack[keep]
    if (length(d$stack)) d$label <- d$stack[[length(d$stack)]]$full
    progress_render(d)
  })
}

# The display's line: the call, its stage, the share done and, from 10% of
# the work on, the time left at the rate so far. At most 4 updates a
# second (option rff.progress_interval, in seconds).
progress_render <- function(d) {
  now <- proc.time()[["elapsed"]]
  frac <- min(max(d$done / d$total, 0), 1)
  d$shown <- max(d$shown, frac)
  if (now - d$last < getOption("rff.progress_interval", 0.25) && frac < 1) return(invisible(NULL))
  d$last <- now
  used <- now - d$t0
  left <- if (frac >= 0.1 && frac < 1) sprintf(", about %s left", format_seconds(used * (1 - frac) / frac)) else ""
  d$out$update(round(1000 * d$shown), sprintf("%s: %s%s", d$what, d$label, left))
}

format_seconds <- function(s) {
  if (s < 300) sprintf("%.0f s", s) else if (s < 5400) sprintf("%.0f min", s / 60) else
    sprintf("%.1f h", s / 3600)
}

# Where a display goes: progressr (steps 0..max, the message beside) or a
# text line on the console. `update(v, msg)` with v non-decreasing.
progress_output <- function(max) {
  if (progress_backend() == "progressr") {
    p <- progressr_steps(max)
    return(list(update = p$set, close = p$close))
  }
  width <- 0L
  started <- FALSE
  # a call shorter than the delay shows nothing
  t0 <- proc.time()[["elapsed"]]
  delay <- getOption("rff.progress_delay", 1)
  list(update = function(v, msg) {
    if (!started && proc.time()[["elapsed"]] - t0 < delay) return(invisible(NULL))
    line <- sprintf("%3d%% %s", as.integer(floor(100 * v / max)), msg)
    w <- max(20L, getOption("width", 80L) - 1L)
    if (nchar(line) > w) line <- paste0(substr(line, 1L, w - 3L), "...")
    cat("\r", line, strrep(" ", max(width - nchar(line), 0L)), sep = "")
    width <<- nchar(line)
    started <<- TRUE
    utils::flush.console()
    invisible(NULL)
  }, close = function() {
    if (started) cat("\n")
    invisible(NULL)
  })
}

# The bar of a call with one stage, from 0 to `max` when `show`, else
# nothing. `set(v)` moves it to v, `close()` ends it; callers register
# `on.exit(pb$close(), add = TRUE)`, beside their other exit work. It goes
# through progressr (the user's handlers()) when progress_backend() says so,
# else it is a text bar.
progress_bar <- function(show, max) {
  if (!isTRUE(show)) return(list(set = function(v) invisible(NULL), close = function() invisible(NULL)))
  if (progress_backend() == "progressr") return(progressr_steps(max))
  pb <- utils::txtProgressBar(min = 0, max = max, style = 3)
  list(set = function(v) utils::setTxtProgressBar(pb, v), close = function() close(pb))
}

# A progressr progression of `max` steps: `set(v, msg)` moves it to v
# (non-decreasing; progressr takes the steps since the last call) with the
# message `msg` (NULL: none), `close()` finishes it.
progressr_steps <- function(max) {
  p <- progressr::progressor(steps = max, on_exit = FALSE)
  at <- 0
  list(set = function(v, msg = NULL) {
    if (v > at || !is.null(msg)) p(message = msg, amount = max(v - at, 0))
    at <<- max(at, v)
    invisible(NULL)
  }, close = function() p(type = "finish"))
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
  if (opt == "progressr" || progressr_listening()) "progressr" else "txt"
}

# Whether progressr's handlers listen to this call: its global handlers are
# on, or the call runs inside progressr::with_progress() (a frame of it is
# on the call stack; progressr has no exported test of its own for that).
progressr_listening <- function() {
  if (isTRUE(progressr::handlers(global = NA))) return(TRUE)
  with_progress <- progressr::with_progress
  for (i in rev(seq_len(sys.nframe()))) {
    if (identical(sys.function(i), with_progress)) return(TRUE)
  }
  FALSE
}

# The call's work is done: the display shows 100% before it closes.
progress_finish <- function() {
  d <- progress_state$call
  if (!is.null(d) && !length(d$stack)) {
    d$done <- d$total
    d$last <- -Inf
    progress_render(d)
  }
  invisible(NULL)
}
