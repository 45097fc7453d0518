# Developer and CI entry points. `make test` is the test command of the README.
R ?= R
LIB := .build/lib

.PHONY: test demo deps document unit unit-blas install site site-check sanitize valgrind bigsize bigfiles mutants stress bench clean check-bare

test:
	@bash tools/check.sh

# what each job needs (tools/install-deps.sh PROFILE): `make demo` installs
# the demo profile only (no TeX, browser or BLAS change), `make test` the
# test profile, `make site`/`site-check` and `make bench` theirs
deps:
	@bash tools/install-deps.sh test

document: deps
	Rscript -e 'roxygen2::roxygenise()'
	rm -f src/*.o src/*.so

# (R CMD INSTALL needs R and a C compiler only)
install:
	mkdir -p $(LIB)
	$(R) CMD INSTALL --no-test-load --library=$(LIB) . > .build/install.log 2>&1 || (cat .build/install.log; exit 1)
	rm -f src/*.o src/*.so

# R CMD check --as-cran with only the hard dependencies (and testthat)
# visible to examples and tests, as CRAN checks without suggested packages;
# vignettes not rebuilt. BARE_ARGS=--no-tests checks the examples only.
check-bare:
	@bash tools/check-bare.sh

# the test suite on an ASan/UBSan build; any report fails
sanitize:
	@bash tools/sanitize.sh

# the test suite under valgrind memcheck; any error in rff's code fails
valgrind:
	@bash tools/valgrind.sh

# n * D above 2^31 through the streamed ridge fit (several minutes)
bigsize: install
	R_LIBS=$(LIB) Rscript tools/bigsize.R

# mutation testing (not part of `make test`; minutes): every plausible bug of
# tools/mutants.txt must make the suite fail. MUTANTS="name ..." runs some.
mutants: deps
	Rscript tools/mutants.R $(MUTANTS)

# the testthat suite N times in a row (default 20), to run while the machine
# is loaded: no test may depend on timing (minutes)
stress: deps
	bash tools/stress.sh $(or $(N),20)

# a fit from files larger than the memory its processes may use, through
# rff_stats_apply() on a 2-worker cluster (a few minutes, 2 GB of disk)
bigfiles: install
	R_LIBS=$(LIB) Rscript tools/bigfiles.R

# quick testthat run against a fresh install, without R CMD check
unit: deps install
	R_LIBS=$(LIB) Rscript -e 'library(rff); testthat::test_dir("tests/testthat", package = "rff", load_package = "installed")'

# the same with rff's own product kernel off (RFF_PRODUCTS=blas): the path
# of every user off Linux x86-64 and under a BLAS rff does not know
unit-blas: deps install
	RFF_PRODUCTS=blas R_LIBS=$(LIB) Rscript -e 'library(rff); stopifnot(rff_blas_info()$$products == "blas"); testthat::test_dir("tests/testthat", package = "rff", load_package = "installed")'

# the pkgdown site (reference by task, the vignettes and vignettes/articles/
# as articles, NEWS) in
# .build/site (offline: tools/site.R); open .build/site/index.html
site: install
	@bash tools/install-deps.sh site
	R_LIBS=$(LIB) Rscript tools/site.R

# the site in a real browser: headless Chromium screenshots of the home page
# and every article in .build/site-shots (chromium installed if missing), and
# a failure for a page whose images are missing
site-check: site
	@bash tools/site-check.sh

demo:
	@bash tools/install-deps.sh demo
	@$(MAKE) --no-print-directory install
	R_LIBS=$(LIB) Rscript tools/demo.R $(or $(OUT),rff-demo)

# rff against the plain-R idiom, bases and scikit-learn, under the default
# BLAS and OpenBLAS, and rff_glm() against glmnet and kernlab (bench/glm.R,
# hours: bench/RESULTS-glm.md); prints the tables and writes bench/RESULTS.md;
# then every fit with its defaults against cv.glmnet, ksvm and ranger on small
# data sets, under both BLAS (bench/defaults.R: bench/RESULTS-defaults.md;
# BENCH_DEFAULTS_LARGE=1 adds diamonds and LetterRecognition); and the
# default threads against threads = 1 beside a CPU hog (bench/load.R:
# bench/RESULTS-load.md); the default D's 400 features against D given on
# 401 to 2,000 rows (bench/features.R: bench/RESULTS-features.md); and the
# time left that the progress display states (bench/progress.R:
# bench/RESULTS-progress.md); and LetterRecognition's time and accuracy
# against D (bench/frontier.R: bench/RESULTS-frontier.md); and classifiers
# on 2,000 to 10,000 rows against ksvm and ranger (bench/midsize.R:
# bench/RESULTS-midsize.md)
bench: install
	@bash tools/install-deps.sh bench
	@bash bench/setup.sh
	Rscript bench/threads.R
	Rscript bench/auto.R
	Rscript bench/glm.R
	Rscript bench/bench.R
	Rscript bench/defaults.R --openblas
	Rscript bench/load.R
	Rscript bench/features.R
	Rscript bench/progress.R
	Rscript bench/frontier.R
	Rscript bench/midsize.R

clean:
	rm -rf .build rff.Rcheck rff_*.tar.gz src/*.o src/*.so
