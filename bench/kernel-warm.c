/* The featurization kernel alone on warm memory: workload F1 (n = 50,000,
   d = 10, D = 1000), one thread, into a result that is already mapped (no
   page faults, no zeroing): what is left of rff_features() without the
   cost of fresh memory. Medians of 21 passes, in ms. Built and run by
   bench/kernel-warm.sh against the package's own src/. */
#include "rff.h"
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int main(void)
{
    const int n = 50000, d = 10, D = 1000, reps = 21;
    double *x = malloc(sizeof(double) * n * d), *w = malloc(sizeof(double) * d * D),
        *b = malloc(sizeof(double) * D), *z = malloc(sizeof(double) * (size_t) n * D);
    if (!x || !w || !b || !z) return 1;
    srand(1);
    for (int i = 0; i < n * d; i++) x[i] = 3.0 * (rand() / (double) RAND_MAX - 0.5);
    for (int i = 0; i < d * D; i++) w[i] = 0.6 * (rand() / (double) RAND_MAX - 0.5);
    for (int i = 0; i < D; i++) b[i] = 6.283185307179586 * rand() / (double) RAND_MAX;
    memset(z, 0, sizeof(double) * (size_t) n * D);
    for (int variant = RFF_VARIANT_PAIR; variant <= RFF_VARIANT_PHASE; variant++) {
        int m = variant == RFF_VARIANT_PAIR ? D / 2 : D;
        rff_fmap fm = {variant, d, m, D, w, variant == RFF_VARIANT_PAIR ? NULL : b,
                       sqrt(2.0 / D), RFF_FEATURES_FOURIER, 0};
        double t[21];
        for (int r = 0; r < reps; r++) {
            double t0 = now();
            for (int i0 = 0; i0 < n; i0 += RFF_BLOCK_ROWS) {
                int nr = n - i0 < RFF_BLOCK_ROWS ? n - i0 : RFF_BLOCK_ROWS;
                rff_featurize_rows_si(&fm, x + i0, n, nr, z + i0, n);
            }
            t[r] = now() - t0;
        }
        qsort(t, reps, sizeof(double), cmp);
        printf("F1 %-5s warm, 1 thread: %6.1f ms (%.2f ns a feature)\n",
               variant == RFF_VARIANT_PAIR ? "pair" : "phase", 1e3 * t[reps / 2],
               1e9 * t[reps / 2] / ((double) n * D));
    }
    return 0;
}
