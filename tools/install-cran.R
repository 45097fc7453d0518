# Installs packages from CRAN with every recursive dependency that is missing
# or older than a version some package of the set requires (install.packages()
# alone installs missing dependencies but never upgrades one that is too old).
# Usage: Rscript tools/install-cran.R [--dry-run] pkg ...
args <- commandArgs(TRUE)
dry <- "--dry-run" %in% args
targets <- setdiff(args, "--dry-run")
repos <- c(CRAN = "https://cloud.r-project.org")
db <- utils::available.packages(repos = repos)
base <- rownames(utils::installed.packages(priority = "base"))
fields <- c("Depends", "Imports", "LinkingTo")

requirements <- function(pkg) {
  txt <- paste(stats::na.omit(db[pkg, fields]), collapse = ",")
  parts <- trimws(strsplit(gsub("\n", " ", txt), ",")[[1]])
  parts <- parts[nzchar(parts)]
  name <- sub("^([A-Za-z0-9.]+).*$", "\\1", parts)
  ver <- ifelse(grepl(">=", parts), sub("^.*>=\\s*([^) ]+).*$", "\\1", parts), NA)
  data.frame(name = name, version = ver, stringsAsFactors = FALSE)
}
installed_version <- function(pkg) {
  v <- tryCatch(utils::packageVersion(pkg), error = function(e) NULL)
  if (is.null(v)) NA_character_ else as.character(v)
}

todo <- character()
queue <- targets
seen <- character()
while (length(queue)) {
  p <- queue[1]; queue <- queue[-1]
  if (p %in% seen) next
  seen <- c(seen, p)
  have <- installed_version(p)
  if (is.na(have)) todo <- c(todo, p)
  if (!(p %in% rownames(db))) next
  if (!(p %in% todo) && !(p %in% targets)) next
  req <- requirements(p)
  req <- req[req$name != "R" & !(req$name %in% base), , drop = FALSE]
  for (i in seq_len(nrow(req))) {
    q <- req$name[i]
    hv <- installed_version(q)
    old <- !is.na(hv) && !is.na(req$version[i]) &&
      package_version(hv) < package_version(req$version[i])
    if (is.na(hv) || old) {
      todo <- c(todo, q)
      queue <- c(queue, q)
    }
  }
}
todo <- unique(todo)
cat("install-cran:", if (length(todo)) todo else "nothing", "\n")
if (!dry && length(todo)) {
  utils::install.packages(todo, lib = .libPaths()[1], repos = repos,
                          dependencies = c("Depends", "Imports", "LinkingTo"),
                          Ncpus = 2)
  bad <- targets[!vapply(targets, requireNamespace, logical(1), quietly = TRUE)]
  if (length(bad)) stop("install-cran: cannot load ", paste(bad, collapse = ", "))
}
