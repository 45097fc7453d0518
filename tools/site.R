# Builds the pkgdown site into .build/site (`make site`), offline: rff is on
# no repository for the home page to link to, and package names in the
# vignettes' code are linked to the documentation of installed packages only
# (downlit would otherwise fetch CRAN's whole package table from a fixed host
# for a package that is not installed, such as future.batchtools, and stop
# where that host cannot be reached).
options(pkgdown.internet = FALSE)
ns <- asNamespace("downlit")
unlockBinding("CRAN_urls", ns)
assign("CRAN_urls", function() data.frame(Package = character(), URL = character()), envir = ns)
lockBinding("CRAN_urls", ns)
pkgdown::build_site(".", install = FALSE, new_process = FALSE, preview = FALSE)
