/* Orthogonal random features (Yu et al., 2016): directions from blocks of a
   Haar-distributed orthogonal matrix, norms from the kernel's radial law. */
#include "rff.h"

/* Fills omega (d x m, unit lengthscale). Each block of d frequencies takes
   its directions from the columns of Q diag(sign(diag(R))), G = QR the QR
   decomposition of a d x d standard normal matrix G (Haar measure on O(d)),
   and independent norms from spec->kernel->radius; the last block is
   truncated. Draw order per block: the d * d normals of G column by column,
   then one norm per frequency used. */
void rff_draw_orthogonal(const rff_spec *spec, double *omega)
{
    int d = spec->d, m = spec->m, info = 0, lwork = -1;
    /* release the work space at the end: callers may draw many maps in one
       .Call */
    const void *vmax = vmaxget();
    double *g = (double *) R_alloc((size_t) d * d, sizeof(double));
    double *tau = (double *) R_alloc((size_t) d, sizeof(double));
    double *sgn = (double *) R_alloc((size_t) d, sizeof(double));
    double wq1 = 0.0, wq2 = 0.0;
    F77_CALL(dgeqrf)(&d, &d, g, &d, tau, &wq1, &lwork, &info);
    if (info != 0) Rf_error("dgeqrf workspace query failed (info = %d)", info);
    F77_CALL(dorgqr)(&d, &d, &d, g, &d, tau, &wq2, &lwork, &info);
    if (info != 0) Rf_error("dorgqr workspace query failed (info = %d)", info);
    lwork = (int) (wq1 > wq2 ? wq1 : wq2);
    if (lwork < d) lwork = d;
    double *work = (double *) R_alloc((size_t) lwork, sizeof(double));

    for (int j0 = 0; j0 < m; j0 += d) {
        int nb = m - j0 < d ? m - j0 : d;
        for (R_xlen_t i = 0; i < (R_xlen_t) d * d; i++) g[i] = norm_rand();
        F77_CALL(dgeqrf)(&d, &d, g, &d, tau, work, &lwork, &info);
        if (info != 0) Rf_error("dgeqrf failed (info = %d)", info);
        for (int k = 0; k < d; k++) sgn[k] = g[k + (R_xlen_t) k * d] < 0.0 ? -1.0 : 1.0;
        F77_CALL(dorgqr)(&d, &d, &d, g, &d, tau, work, &lwork, &info);
        if (info != 0) Rf_error("dorgqr failed (info = %d)", info);
        for (int k = 0; k < nb; k++) {
            double r = spec->kernel->radius(d, spec->nu) * sgn[k];
            double *col = omega + (R_xlen_t) (j0 + k) * d;
            const double *q = g + (R_xlen_t) k * d;
            for (int i = 0; i < d; i++) col[i] = r * q[i];
        }
        rff_check_interrupt();
    }
    vmaxset(vmax);
}
