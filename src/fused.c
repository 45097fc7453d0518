/* Featurization kernels of the shift-invariant maps ("pair", "phase").

   The fused kernel computes projection, phase and cos/sin of a chunk of rows
   in one pass, vectorized over rows: projections of four frequencies go to a
   buffer in L1, cos/sin from there to z, which is written once, and the
   chunk of x stays in cache. For wide inputs the projection is a dgemm into
   z and the trigonometric pass runs in place. The cos/sin are the
   straight-line versions of trig.h; arguments outside their exact range are
   recomputed with libm (rff_trig_chunk). */
#include "rff.h"
#include "trig.h"
#include <stdint.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__linux__) || defined(__APPLE__)
#include <unistd.h>
#endif

/* One copy of the kernels per x86-64 level, chosen at load time (GCC's
   function multi-versioning; needs glibc's ifunc). Elsewhere the default
   build runs, which is the same code for the baseline instruction set. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && \
    defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__) && \
    !defined(RFF_NO_CLONES)
#define RFF_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define RFF_CLONES
#endif

#define RFF_PRAGMA(x) _Pragma(#x)
#ifdef _OPENMP
#define RFF_SIMD RFF_PRAGMA(omp simd)
#define RFF_SIMD_MAX(var) RFF_PRAGMA(omp simd reduction(max:var))
#else
#define RFF_SIMD
#define RFF_SIMD_MAX(var)
#endif

/* Rows per pass at most: the projections of one chunk for four frequencies
   stay in L1 between the projection and the trigonometric loop. */
#define RFF_FUSED_CHUNK 256
#define RFF_FUSED_X_BYTES (512 * 1024)

/* Input dimensions up to this use the fused kernel; wider inputs a dgemm,
   whose cache blocking pays once the projection dominates (measured at
   n = 4000, D = 1000, one thread: d = 400, fused 0.13 s, dgemm route 0.23 s
   with OpenBLAS and 0.88 s with the reference BLAS; d = 2000, fused 1.6 s,
   dgemm route 1.1 s with OpenBLAS and 7.1 s with the reference BLAS). */
#define RFF_FUSED_MAX_D 512

/* zc[i] = s cos(p[i] + b) and, if zs, zs[i] = s sin(p[i]) (b = 0 then) for
   nr rows; p must not alias zc or zs. With needs_check, the entries whose
   |p[i] + b| is beyond the end of the exact range (rare: huge Cauchy
   frequencies) are redone with libm afterwards; callers that know every
   argument is within it pass 0. Infinite and NaN arguments give NaN either
   way. */
RFF_INLINE void rff_trig_chunk(const double *restrict p, double b, double s,
                               double *restrict zc, double *restrict zs, int nr,
                               int needs_check)
{
    if (zs) {
        RFF_SIMD
        for (int i = 0; i < nr; i++) {
            double sn, cs;
            rff_sincos_fast(p[i] + b, &sn, &cs);
            zs[i] = s * sn;
            zc[i] = s * cs;
        }
    } else {
        RFF_SIMD
        for (int i = 0; i < nr; i++) zc[i] = s * rff_cos_fast(p[i] + b);
    }
    if (!needs_check) return;
    /* a vector scan first: nearly always nothing is out of range */
    int out = 0;
#ifdef _OPENMP
#pragma omp simd reduction(|:out)
#endif
    for (int i = 0; i < nr; i++) out |= !rff_trig_fast_ok(p[i] + b);
    if (!out) return;
    for (int i = 0; i < nr; i++) {
        double a = p[i] + b;
        if (!rff_trig_fast_ok(a)) {
            zc[i] = s * cos(a);
            if (zs) zs[i] = s * sin(a);
        }
    }
}

/* max_i |x[i, k]| over the nr rows of a chunk, for each of the d columns
   (NaN entries are passed over: they give NaN features on either path). */
RFF_INLINE void rff_chunk_absmax(const double *restrict x, int ldx, int nr, int d,
                                 double *restrict xmax)
{
    for (int k = 0; k < d; k++) {
        const double *xk = x + (R_xlen_t) k * ldx;
        double m = 0.0;
        for (int i = 0; i < nr; i++) {
            double a = fabs(xk[i]);
            m = a > m ? a : m;
        }
        xmax[k] = m;
    }
}

/* Whether the arguments p + b of frequency w (d entries) may leave the exact
   range on a chunk with column maxima xmax: |w'x + b| <= sum_k |w_k| xmax_k
   + |b|, with half the range as margin for the rounding of the sums. */
RFF_INLINE int rff_trig_needs_check(const double *restrict w, int d,
                                    const double *restrict xmax, double b)
{
    double bound = fabs(b);
    for (int k = 0; k < d; k++) bound += fabs(w[k]) * xmax[k];
    return !(bound < 0.5 * RFF_TRIG_MAX);
}

/* p[i] = sum_k x[i, k] w[k] for nr rows, summed in the order of k as a
   column-by-column dgemm does; four columns of x per pass over p. */
RFF_INLINE void rff_project(const double *restrict x, int ldx, int nr,
                            const double *restrict w, int d, double *restrict p)
{
    const double w0 = w[0];
    int k = 1;
    RFF_SIMD
    for (int i = 0; i < nr; i++) p[i] = x[i] * w0;
    for (; k + 3 < d; k += 4) {
        const double *x0 = x + (R_xlen_t) k * ldx, *x1 = x0 + ldx,
            *x2 = x1 + ldx, *x3 = x2 + ldx;
        const double w0 = w[k], w1 = w[k + 1], w2 = w[k + 2], w3 = w[k + 3];
        RFF_SIMD
        for (int i = 0; i < nr; i++)
            p[i] = (((p[i] + x0[i] * w0) + x1[i] * w1) + x2[i] * w2) + x3[i] * w3;
    }
    for (; k < d; k++) {
        const double *xk = x + (R_xlen_t) k * ldx;
        const double wk = w[k];
        RFF_SIMD
        for (int i = 0; i < nr; i++) p[i] += xk[i] * wk;
    }
}

/* rff_project() for four frequencies w, w + d, w + 2d, w + 3d at once, into
   p, p + RFF_FUSED_CHUNK, ...: each load of x feeds four multiply-adds.
   Each column is summed in the same order as by rff_project(). */
RFF_INLINE void rff_project4(const double *restrict x, int ldx, int nr,
                             const double *restrict w, int d, double *restrict p)
{
    double *restrict p0 = p, *restrict p1 = p + RFF_FUSED_CHUNK,
        *restrict p2 = p + 2 * RFF_FUSED_CHUNK, *restrict p3 = p + 3 * RFF_FUSED_CHUNK;
    const double *w0 = w, *w1 = w + d, *w2 = w + 2 * d, *w3 = w + 3 * d;
    int k = 1;
    {
        const double a0 = w0[0], a1 = w1[0], a2 = w2[0], a3 = w3[0];
        RFF_SIMD
        for (int i = 0; i < nr; i++) {
            double xi = x[i];
            p0[i] = xi * a0; p1[i] = xi * a1; p2[i] = xi * a2; p3[i] = xi * a3;
        }
    }
    for (; k + 3 < d; k += 4) {
        const double *xa = x + (R_xlen_t) k * ldx, *xb = xa + ldx, *xc = xb + ldx,
            *xd = xc + ldx;
        const double a0 = w0[k], a1 = w1[k], a2 = w2[k], a3 = w3[k];
        const double b0 = w0[k + 1], b1 = w1[k + 1], b2 = w2[k + 1], b3 = w3[k + 1];
        const double c0 = w0[k + 2], c1 = w1[k + 2], c2 = w2[k + 2], c3 = w3[k + 2];
        const double e0 = w0[k + 3], e1 = w1[k + 3], e2 = w2[k + 3], e3 = w3[k + 3];
        RFF_SIMD
        for (int i = 0; i < nr; i++) {
            double u = xa[i], v = xb[i], t = xc[i], q = xd[i];
            p0[i] = (((p0[i] + u * a0) + v * b0) + t * c0) + q * e0;
            p1[i] = (((p1[i] + u * a1) + v * b1) + t * c1) + q * e1;
            p2[i] = (((p2[i] + u * a2) + v * b2) + t * c2) + q * e2;
            p3[i] = (((p3[i] + u * a3) + v * b3) + t * c3) + q * e3;
        }
    }
    for (; k < d; k++) {
        const double *xa = x + (R_xlen_t) k * ldx;
        const double a0 = w0[k], a1 = w1[k], a2 = w2[k], a3 = w3[k];
        RFF_SIMD
        for (int i = 0; i < nr; i++) {
            double u = xa[i];
            p0[i] += u * a0; p1[i] += u * a1; p2[i] += u * a2; p3[i] += u * a3;
        }
    }
}

/* cos (and, for "pair", sin) of the projections p of frequency j into zc
   (and zs); xmax holds the chunk's column maxima (rff_chunk_absmax). */
RFF_INLINE void rff_trig_freq(const rff_fmap *map, int j, const double *p,
                              const double *xmax, int nr, double *zc, double *zs)
{
    const double b = map->variant == RFF_VARIANT_PAIR ? 0.0 : map->phase[j];
    const int needs_check =
        rff_trig_needs_check(map->omega + (R_xlen_t) j * map->d, map->d, xmax, b);
    rff_trig_chunk(p, b, map->scale, zc, zs, nr, needs_check);
}

/* rff_trig_freq() into rows i0.. of z. */
RFF_INLINE void rff_trig_column(const rff_fmap *map, int j, const double *p,
                                const double *xmax, int i0, int nr, double *z,
                                int ldz)
{
    double *zc = z + (R_xlen_t) j * ldz + i0;
    double *zs = map->variant == RFF_VARIANT_PAIR ? zc + (R_xlen_t) map->m * ldz : NULL;
    rff_trig_freq(map, j, p, xmax, nr, zc, zs);
}

/* Rows per chunk for input dimension d: a chunk of x (chunk x d) fits in
   half of a 1 MB L2. */
RFF_INLINE int rff_fused_chunk_rows(int d)
{
    int chunk = (int) ((R_xlen_t) RFF_FUSED_X_BYTES / ((R_xlen_t) d * sizeof(double)));
    return chunk < 32 ? 32 : chunk > RFF_FUSED_CHUNK ? RFF_FUSED_CHUNK : chunk & ~7;
}

/* Projections of nj <= 4 frequencies w, w + d, ... into p, p +
   RFF_FUSED_CHUNK, ... */
RFF_INLINE void rff_project_group(const double *x, int ldx, int nr, const double *w,
                                  int d, int nj, double *p)
{
    if (nj == 4) {
        rff_project4(x, ldx, nr, w, d, p);
        return;
    }
    for (int c = 0; c < nj; c++)
        rff_project(x, ldx, nr, w + (R_xlen_t) c * d, d, p + c * RFF_FUSED_CHUNK);
}

/* Projection and cos/sin chunk by chunk, four frequencies at a time. */
RFF_CLONES
static void rff_fused_rows(const rff_fmap *map, const double *x, int ldx,
                           int nrows, double *z, int ldz)
{
    const int d = map->d, m = map->m, chunk = rff_fused_chunk_rows(d);
    double p[4 * RFF_FUSED_CHUNK], xmax[RFF_FUSED_MAX_D];
    for (int i0 = 0; i0 < nrows; i0 += chunk) {
        const int nr = nrows - i0 < chunk ? nrows - i0 : chunk;
        rff_chunk_absmax(x + i0, ldx, nr, d, xmax);
        for (int j = 0; j < m; j += 4) {
            const int nj = m - j < 4 ? m - j : 4;
            rff_project_group(x + i0, ldx, nr, map->omega + (R_xlen_t) j * d, d, nj, p);
            for (int c = 0; c < nj; c++)
                rff_trig_column(map, j + c, p + c * RFF_FUSED_CHUNK, xmax, i0, nr, z, ldz);
        }
    }
}

/* out[i, c] = sum_j z(x_i)_j v[c, j] (v: mv x D, out: nrows x mv, leading
   dimension ldo) without storing z: each chunk of a feature column goes from
   the L1 buffer straight into the sums. */
RFF_CLONES
static void rff_fused_dot_rows(const rff_fmap *map, const double *x, int ldx,
                               int nrows, const double *v, int mv, double *out,
                               int ldo)
{
    const int d = map->d, m = map->m, chunk = rff_fused_chunk_rows(d);
    const int pair = map->variant == RFF_VARIANT_PAIR;
    double p[4 * RFF_FUSED_CHUNK], buf[2 * RFF_FUSED_CHUNK], xmax[RFF_FUSED_MAX_D];
    const double *bs = buf + RFF_FUSED_CHUNK;
    for (int i0 = 0; i0 < nrows; i0 += chunk) {
        const int nr = nrows - i0 < chunk ? nrows - i0 : chunk;
        rff_chunk_absmax(x + i0, ldx, nr, d, xmax);
        for (int k = 0; k < mv; k++)
            memset(out + (R_xlen_t) k * ldo + i0, 0, (size_t) nr * sizeof(double));
        for (int j = 0; j < m; j += 4) {
            const int nj = m - j < 4 ? m - j : 4;
            rff_project_group(x + i0, ldx, nr, map->omega + (R_xlen_t) j * d, d, nj, p);
            for (int c = 0; c < nj; c++) {
                const int jc = j + c;
                rff_trig_freq(map, jc, p + c * RFF_FUSED_CHUNK, xmax, nr, buf,
                              pair ? buf + RFF_FUSED_CHUNK : NULL);
                for (int k = 0; k < mv; k++) {
                    double *restrict o = out + (R_xlen_t) k * ldo + i0;
                    const double vc = v[k + (R_xlen_t) jc * mv];
                    if (pair) {
                        const double vs = v[k + (R_xlen_t) (jc + m) * mv];
                        RFF_SIMD
                        for (int i = 0; i < nr; i++) o[i] += buf[i] * vc + bs[i] * vs;
                    } else {
                        RFF_SIMD
                        for (int i = 0; i < nr; i++) o[i] += buf[i] * vc;
                    }
                }
            }
        }
    }
}

/* Whether rff_dot_rows_si() takes the map: Fourier features of an input
   dimension the fused kernel handles. */
int rff_dot_fused_ok(const rff_fmap *map)
{
    return map->features == RFF_FEATURES_FOURIER && map->d <= RFF_FUSED_MAX_D;
}

/* rff_fused_dot_rows() for a map rff_dot_fused_ok() takes. */
void rff_dot_rows_si(const rff_fmap *map, const double *x, int ldx, int nrows,
                     const double *v, int mv, double *out, int ldo)
{
    if (nrows > 0) rff_fused_dot_rows(map, x, ldx, nrows, v, mv, out, ldo);
}

/* cos/sin in place of the projections that a dgemm left in z. */
RFF_CLONES
static void rff_trig_inplace(const rff_fmap *map, int nrows, double *z, int ldz)
{
    const int m = map->m, pair = map->variant == RFF_VARIANT_PAIR;
    double p[RFF_FUSED_CHUNK];
    for (int j = 0; j < m; j++) {
        double *zc = z + (R_xlen_t) j * ldz;
        for (int i0 = 0; i0 < nrows; i0 += RFF_FUSED_CHUNK) {
            const int nr = nrows - i0 < RFF_FUSED_CHUNK ? nrows - i0 : RFF_FUSED_CHUNK;
            memcpy(p, zc + i0, (size_t) nr * sizeof(double));
            if (pair)
                rff_trig_chunk(p, 0.0, map->scale, zc + i0, zc + (R_xlen_t) m * ldz + i0, nr, 1);
            else
                rff_trig_chunk(p, map->phase[j], map->scale, zc + i0, NULL, nr, 1);
        }
    }
}

void rff_featurize_rows_si(const rff_fmap *map, const double *x, int ldx,
                           int nrows, double *z, int ldz)
{
    if (nrows <= 0) return;
    int d = map->d, m = map->m;
    if (d <= RFF_FUSED_MAX_D) {
        rff_fused_rows(map, x, ldx, nrows, z, ldz);
        return;
    }
    rff_dgemm_seq("N", "N", nrows, m, d, x, ldx, map->omega, d, 0.0, z, ldz);
    rff_trig_inplace(map, nrows, z, ldz);
}

/* The system's page size (4096 where it cannot be asked). */
static size_t rff_page_size(void)
{
#if defined(__linux__) || defined(__APPLE__)
    long ps = sysconf(_SC_PAGESIZE);
    if (ps > 0) return (size_t) ps;
#endif
    return 4096;
}

/* Maps pages [a, a + len) of a fresh allocation for writing: one madvise
   (MADV_POPULATE_WRITE, Linux 5.14) where the kernel has it, else a store
   to each page. Either way the kernel zeroes the pages here. */
static void rff_populate(char *a, size_t len, size_t page)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    if (madvise(a, len, MADV_POPULATE_WRITE) == 0) return;
#endif
    for (size_t off = 0; off < len; off += page) a[off] = 0;
}

/* Makes a freshly allocated result of `bytes` bytes ready to be written:
   maps every page in batches among the threads, with an interrupt check
   between batches, rather than inside the featurization, where a
   column-major block of rows reaches every page of the result at once. The
   contents are unspecified afterwards (the featurization writes every
   entry).

   Huge pages are not asked for: where the host provides memory lazily
   (virtual machines) they are slow to get whenever the ones freed a moment
   ago are gone. Mapping 400 MB took 1.1-1.3 s with MADV_HUGEPAGE at the
   first call and at every call after a 5 s pause, against 0.10-0.12 s with
   4 KB pages and MADV_POPULATE_WRITE (bench/pages.c). */
void rff_prepare_result(double *z, size_t bytes, int threads)
{
    const size_t page = rff_page_size();
    const uintptr_t start = ((uintptr_t) z + page - 1) & ~(uintptr_t) (page - 1);
    const uintptr_t end = ((uintptr_t) z + bytes) & ~(uintptr_t) (page - 1);
    if (end <= start) return;
    const R_xlen_t npages = (R_xlen_t) ((end - start) / page);
    /* 64 MB between interrupt checks */
    const R_xlen_t batch = (R_xlen_t) ((((size_t) 64 << 20) + page - 1) / page);
    int nth = threads > 0 ? threads : 1;
    for (R_xlen_t p0 = 0; p0 < npages; p0 += batch) {
        R_xlen_t p1 = p0 + batch < npages ? p0 + batch : npages;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nth) schedule(static) if (nth > 1)
#endif
        for (int t = 0; t < nth; t++) {
            R_xlen_t q0 = p0 + (p1 - p0) * t / nth, q1 = p0 + (p1 - p0) * (t + 1) / nth;
            if (q1 > q0)
                rff_populate((char *) (start + (size_t) q0 * page),
                             (size_t) (q1 - q0) * page, page);
        }
        rff_check_interrupt();
    }
}

RFF_CLONES
static void rff_trig_apply(const double *x, R_xlen_t n, double *cos1,
                           double *cos2, double *sin2)
{
    for (R_xlen_t i0 = 0; i0 < n; i0 += RFF_FUSED_CHUNK) {
        int nr = n - i0 < RFF_FUSED_CHUNK ? (int) (n - i0) : RFF_FUSED_CHUNK;
        rff_trig_chunk(x + i0, 0.0, 1.0, cos1 + i0, NULL, nr, 1);
        rff_trig_chunk(x + i0, 0.0, 1.0, cos2 + i0, sin2 + i0, nr, 1);
    }
}

/* The featurization kernels' cos and sin of x, for the accuracy tests: a
   matrix with columns cos (cosine-only loop), cos and sin (sine-cosine
   loop). */
SEXP rff_trig(SEXP x)
{
    if (!Rf_isReal(x)) Rf_error("`x` must be a double vector");
    R_xlen_t n = XLENGTH(x);
    if (n > INT_MAX) Rf_error("`x` is too long");
    SEXP out = PROTECT(Rf_allocMatrix(REALSXP, (int) n, 3));
    double *o = REAL(out);
    rff_trig_apply(REAL(x), n, o, o + n, o + 2 * n);
    UNPROTECT(1);
    return out;
}
