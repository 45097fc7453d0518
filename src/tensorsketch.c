/* TensorSketch features of the polynomial kernel (x'y / l^2 + offset)^degree
   (Pham and Pagh, 2013). With u = (x / l, sqrt(offset)) of length d + 1,
   the features are the count sketch of the tensor power u^(degree) with
   bucket (h_1(k_1) + ... + h_p(k_p)) mod D and sign s_1(k_1) ... s_p(k_p),
   which is the circular convolution of the p count sketches of u. The
   convolution is computed directly, vectorized over a chunk of rows: the
   buckets of a partial product are the same for every row, so each step
   adds (d + 1) scaled copies of every occupied bucket, at most
   (d + 1) min(D, (d + 1)^(i - 1)) products per row at step i, instead of
   the FFTs' O(D log D) per factor. Hashes and signs are drawn in
   polynomial.c. */
#include "rff.h"

/* Rows per chunk: the partial products of a chunk, two chunk x D buffers,
   are per thread; up to a block of rows (fewer strided passes over z) while
   a buffer stays within 2 MB. */
static int sketch_rows(int D)
{
    int r = (int) (((R_xlen_t) 1 << 18) / D);
    return r < 16 ? 16 : r > RFF_BLOCK_ROWS ? RFF_BLOCK_ROWS : r & ~7;
}

/* Reads and checks a TensorSketch map: d, D, degree, offset, lengthscale,
   hash ((d + 1) x degree integers in 0..D-1), sign ((d + 1) x degree, +-1). */
void rff_sketch_read(SEXP map, rff_fmap *out)
{
    out->features = RFF_FEATURES_SKETCH;
    out->variant = RFF_VARIANT_PAIR;
    out->d = rff_as_int(rff_list_elt(map, "d"), "map$d", 1);
    out->D = rff_as_int(rff_list_elt(map, "D"), "map$D", 1);
    out->degree = rff_degree_value(rff_list_elt(map, "degree"));
    double offset = rff_as_double(rff_list_elt(map, "offset"), "offset");
    if (!(offset >= 0)) rff_abort_arg("offset", "`offset` must be >= 0");
    out->root_offset = sqrt(offset);
    out->scale = 1.0;
    int d = out->d, D = out->D, p = out->degree;
    const double *ls = rff_check_lengthscale(rff_list_elt(map, "lengthscale"), d);
    R_xlen_t nls = XLENGTH(rff_list_elt(map, "lengthscale"));
    double *inv = (double *) R_alloc((size_t) d, sizeof(double));
    for (int k = 0; k < d; k++) inv[k] = 1.0 / ls[nls == 1 ? 0 : k];
    out->inv_ls = inv;
    SEXP hash = rff_list_elt(map, "hash"), sign = rff_list_elt(map, "sign");
    if (TYPEOF(hash) != INTSXP || !Rf_isMatrix(hash) || Rf_nrows(hash) != d + 1 ||
        Rf_ncols(hash) != p || !Rf_isReal(sign) || !Rf_isMatrix(sign) ||
        Rf_nrows(sign) != d + 1 || Rf_ncols(sign) != p)
        rff_abort_arg("map", "`map` is damaged: `hash` and `sign` must be %d x %d matrices",
                      d + 1, p);
    const int *h = INTEGER(hash);
    const double *s = REAL(sign);
    for (R_xlen_t i = 0; i < (R_xlen_t) (d + 1) * p; i++) {
        if (h[i] == NA_INTEGER || h[i] < 0 || h[i] >= D)
            rff_abort_arg("map", "`map` is damaged: `hash` must hold buckets 0..%d", D - 1);
        if (s[i] != 1.0 && s[i] != -1.0)
            rff_abort_arg("map", "`map` is damaged: `sign` must hold -1 and 1");
    }
    out->hash = h;
    out->sign = s;
}

/* Doubles of workspace per thread: the scaled rows (chunk x (d + 1)), two
   chunk x D buffers of partial products, and three int arrays of D. */
size_t rff_sketch_work(const rff_fmap *map)
{
    size_t D = (size_t) map->D;
    size_t ints = (3 * D * sizeof(int) + sizeof(double) - 1) / sizeof(double);
    return (size_t) sketch_rows(map->D) * ((size_t) map->d + 1 + 2 * D) + ints;
}

/* dst[i] += w * a[i] * b[i] */
static void add_product(double *restrict dst, double w, const double *restrict a,
                        const double *restrict b, int nr)
{
#ifdef _OPENMP
#pragma omp simd
#endif
    for (int i = 0; i < nr; i++) dst[i] += w * a[i] * b[i];
}

void rff_sketch_rows(const rff_fmap *map, const double *x, int ldx, int nrows,
                     double *z, int ldz, double *work)
{
    const int d = map->d, D = map->D, p = map->degree, d1 = d + 1, S = sketch_rows(D);
    double *u = work;                                   /* S x (d + 1) */
    double *a = u + (size_t) S * d1, *b = a + (size_t) S * D;   /* S x D each */
    int *mark = (int *) (b + (size_t) S * D);
    int *act = mark + D, *next = act + D;
    memset(mark, 0, (size_t) D * sizeof(int));
    for (int i0 = 0; i0 < nrows; i0 += S) {
        const int nr = nrows - i0 < S ? nrows - i0 : S;
        for (int k = 0; k < d; k++) {
            const double *xk = x + (R_xlen_t) k * ldx + i0;
            double *uk = u + (size_t) k * S, s = map->inv_ls[k];
            for (int i = 0; i < nr; i++) uk[i] = xk[i] * s;
        }
        for (int i = 0; i < nr; i++) u[(size_t) d * S + i] = map->root_offset;
        for (int j = 0; j < D; j++)
            memset(z + (R_xlen_t) j * ldz + i0, 0, (size_t) nr * sizeof(double));
        const int *h = map->hash;
        const double *sg = map->sign;
        if (p == 1) {
            for (int k = 0; k < d1; k++) {
                double *dst = z + (R_xlen_t) h[k] * ldz + i0;
                const double *uk = u + (size_t) k * S, w = sg[k];
                for (int i = 0; i < nr; i++) dst[i] += w * uk[i];
            }
            continue;
        }
        /* the count sketch of u by the first factor, in the occupied
           buckets act[0..nact) of a */
        int nact = 0;
        for (int k = 0; k < d1; k++) {
            int c = h[k];
            double *ac = a + (size_t) c * S;
            if (!mark[c]) {
                mark[c] = 1;
                act[nact++] = c;
                memset(ac, 0, (size_t) nr * sizeof(double));
            }
            const double *uk = u + (size_t) k * S, w = sg[k];
            for (int i = 0; i < nr; i++) ac[i] += w * uk[i];
        }
        for (int t = 0; t < nact; t++) mark[act[t]] = 0;
        double *cur = a, *nxt = b;
        for (int f = 1; f < p; f++) {
            const int last = f == p - 1;
            const int *hf = h + (size_t) f * d1;
            const double *sf = sg + (size_t) f * d1;
            int nnext = 0;
            for (int t = 0; t < nact; t++) {
                const int c = act[t];
                const double *src = cur + (size_t) c * S;
                for (int k = 0; k < d1; k++) {
                    int col = c + hf[k];
                    if (col >= D) col -= D;
                    double *dst;
                    if (last) {
                        dst = z + (R_xlen_t) col * ldz + i0;
                    } else {
                        dst = nxt + (size_t) col * S;
                        if (!mark[col]) {
                            mark[col] = 1;
                            next[nnext++] = col;
                            memset(dst, 0, (size_t) nr * sizeof(double));
                        }
                    }
                    add_product(dst, sf[k], u + (size_t) k * S, src, nr);
                }
            }
            if (!last) {
                for (int t = 0; t < nnext; t++) mark[next[t]] = 0;
                double *tmp = cur; cur = nxt; nxt = tmp;
                int *ti = act; act = next; next = ti;
                nact = nnext;
            }
        }
    }
}
