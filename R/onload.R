# Layer 10 (loading): what happens when rff is loaded: the product route is
# handed to the C code, and its parsnip model is registered with parsnip,
# now if parsnip is loaded, else when it is.

.onLoad <- function(libname, pkgname) {
  # rff's own product kernel on or off as options(rff.products),
  # RFF_PRODUCTS and the BLAS found say (sync_products()), before any
  # routine runs: a worker process reaches the C code without a call that
  # checks its `threads`. (A bad setting is an error at that call, not here.)
  tryCatch(sync_products(), rff_error = function(e) NULL)
  register <- function(...) register_parsnip_model()
  if (isNamespaceLoaded("parsnip")) register()
  setHook(packageEvent("parsnip", "onLoad"), register)
  invisible(NULL)
}
