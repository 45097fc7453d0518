# The progress display of long calls (progress_bar() in R/runtime.R):
# progressr when it is set up, the text bar otherwise, nothing with
# progress = FALSE.

skip_if_not_installed("progressr")

# The progressr conditions and the printed output of `expr`.
progress_record <- function(expr) {
  events <- list()
  out <- capture.output(value <- withCallingHandlers(expr, progression = function(c) {
    events[[length(events) + 1L]] <<- list(type = c$type, amount = c$amount, steps = c$steps)
  }))
  list(value = value, events = events, out = out)
}

set.seed(61)
x <- matrix(rnorm(2000), 1000, 2)
y <- x[, 1] + rnorm(1000)
map <- rff_map(2, D = 10)

test_that("through progressr: its conditions add up to the rows, then finish", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE)
  on.exit(options(old))
  r <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  types <- vapply(r$events, `[[`, "", "type")
  expect_identical(types[1L], "initiate")
  expect_identical(types[length(types)], "finish")
  expect_equal(r$events[[1L]]$steps, 1000)
  ups <- r$events[types == "update"]
  expect_length(ups, 10L)
  expect_equal(sum(vapply(ups, `[[`, 0, "amount")), 1000)
  expect_length(r$out, 0L)
  expect_equal(r$value, rff_stats(x, y, map = map, chunk_size = 100, progress = FALSE))
})

test_that("the text bar when progressr is not chosen, nothing with progress = FALSE", {
  old <- options(rff.progress = "txt", progressr.enable = TRUE)
  on.exit(options(old))
  r <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  expect_length(r$events, 0L)
  expect_match(paste(r$out, collapse = ""), "100%", fixed = TRUE)
  options(rff.progress = "progressr")
  q <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = FALSE))
  expect_length(q$events, 0L)
  expect_length(q$out, 0L)
  # "auto": progressr only while its global handlers are on
  options(rff.progress = "auto")
  skip_if(isTRUE(progressr::handlers(global = NA)), "progressr's global handlers are on")
  a <- progress_record(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE))
  expect_length(a$events, 0L)
  expect_match(paste(a$out, collapse = ""), "100%", fixed = TRUE)
})

test_that("rff_stats_apply() reports one step per chunk through progressr", {
  old <- options(rff.progress = "progressr", progressr.enable = TRUE)
  on.exit(options(old))
  chunks <- split(seq_len(1000), rep(1:4, each = 250))
  r <- progress_record(rff_stats_apply(chunks, function(i) list(x = x[i, ], y = y[i]),
                                       map = map, progress = TRUE))
  types <- vapply(r$events, `[[`, "", "type")
  expect_equal(r$events[[1L]]$steps, 4)
  expect_equal(sum(vapply(r$events[types == "update"], `[[`, 0, "amount")), 4)
  expect_equal(r$value$n, 1000)
})

test_that("a bad rff.progress option is an rff_error naming it", {
  old <- options(rff.progress = "bar")
  on.exit(options(old))
  expect_rff_error(rff_stats(x, y, map = map, chunk_size = 100, progress = TRUE),
                   "rff.progress")
})
