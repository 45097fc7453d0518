/* Vectorizable cosine and sine for the featurization kernels.

   Straight-line code (no calls, no data-dependent branches) so that a loop
   over these functions under `#pragma omp simd` compiles to vector code on
   any OpenMP compiler. Cody-Waite reduction by pi/2 in three parts, exact for
   |x| < RFF_TRIG_MAX, then the fdlibm minimax polynomials on [-pi/4, pi/4];
   the absolute error is a few units in the last place. Arguments at or above
   RFF_TRIG_MAX (huge Cauchy frequencies), infinities and NaN must be
   recomputed with libm's cos()/sin(): the loops report them through
   rff_trig_fast_ok(). */
#ifndef RFF_TRIG_H
#define RFF_TRIG_H

#include <float.h>
#include <math.h>

/* k * RFF_PIO2_1 is exact while |k| < 2^20 (RFF_PIO2_1 has 33 bits) */
#define RFF_TRIG_MAX 1.0e6

#define RFF_TWO_OVER_PI 6.36619772367581382433e-01
#define RFF_PIO2_1 1.57079632673412561417e+00  /* first 33 bits of pi/2 */
#define RFF_PIO2_2 6.07710050630396597660e-11  /* next 33 bits */
#define RFF_PIO2_3 2.02226624871116645580e-21  /* the rest, rounded */
#define RFF_ROUND_MAGIC 6755399441055744.0     /* 1.5 * 2^52 */

#define RFF_ONE_OVER_PI 3.18309886183790671538e-01
/* Taylor coefficients (-1)^k / (2k + 1)! of sin */
#define RFF_T1 -1.6666666666666666e-01
#define RFF_T2 8.333333333333333e-03
#define RFF_T3 -1.984126984126984e-04
#define RFF_T4 2.7557319223985893e-06
#define RFF_T5 -2.505210838544172e-08
#define RFF_T6 1.6059043836821613e-10
#define RFF_T7 -7.647163731819816e-13
#define RFF_T8 2.8114572543455206e-15
#define RFF_T9 -8.22063524662433e-18
#define RFF_T10 1.9572941063391263e-20

/* fdlibm's __kernel_sin and __kernel_cos coefficients */
#define RFF_S1 -1.66666666666666324348e-01
#define RFF_S2 8.33333333332248946124e-03
#define RFF_S3 -1.98412698298579493134e-04
#define RFF_S4 2.75573137070700676789e-06
#define RFF_S5 -2.50507602534068634195e-08
#define RFF_S6 1.58969099521155010221e-10
#define RFF_C1 4.16666666666666019037e-02
#define RFF_C2 -1.38888888888741095749e-03
#define RFF_C3 2.48015872894767294178e-05
#define RFF_C4 -2.75573143513906633035e-07
#define RFF_C5 2.08757232129817482790e-09
#define RFF_C6 -1.13596475577881948265e-11

/* inlined into each vector loop, whatever the compiler's size limits */
#if defined(__GNUC__)
#define RFF_INLINE static inline __attribute__((always_inline))
#else
#define RFF_INLINE static inline
#endif

#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
/* round to nearest by adding and removing 1.5 * 2^52 (|v| < 2^51) */
#define RFF_RINT(v) (((v) + RFF_ROUND_MAGIC) - RFF_ROUND_MAGIC)
#else
/* extended-precision evaluation would break the trick above */
#define RFF_RINT(v) nearbyint(v)
#endif

/* x = k pi/2 + r with |r| <= pi/4 (+ rounding); returns r, and in *q the
   quadrant k mod 4 in {0, 1, 2, 3}, as a double so that the loop stays in
   one vector type and needs no comparisons. */
RFF_INLINE double rff_trig_reduce(double x, double *q)
{
    double k = RFF_RINT(x * RFF_TWO_OVER_PI);
    /* floor(k / 4) = round((k - 1.5) / 4) for integer k, without ties */
    *q = k - 4.0 * RFF_RINT((k - 1.5) * 0.25);
    return ((x - k * RFF_PIO2_1) - k * RFF_PIO2_2) - k * RFF_PIO2_3;
}

RFF_INLINE double rff_sin_poly(double r)
{
    double z = r * r;
    double p = RFF_S2 + z * (RFF_S3 + z * (RFF_S4 + z * (RFF_S5 + z * RFF_S6)));
    return r + r * z * (RFF_S1 + z * p);
}

RFF_INLINE double rff_cos_poly(double r)
{
    double z = r * r;
    double p = z * (RFF_C1 + z * (RFF_C2 + z * (RFF_C3 + z * (RFF_C4 + z * (RFF_C5 + z * RFF_C6)))));
    double hz = 0.5 * z;
    double w = 1.0 - hz;
    return w + (((1.0 - w) - hz) + z * p);
}

/* Whether x is in the range where rff_cos_fast()/rff_sin_fast() are exact to
   a few ulps. Outside it they return garbage for finite x, and NaN (as libm
   does) for infinite or NaN x. */
RFF_INLINE int rff_trig_fast_ok(double x)
{
    return !(fabs(x) >= RFF_TRIG_MAX);
}

/* The selection by quadrant q is arithmetic (multiplications by 0, 1 and -1
   are exact): odd = q mod 2, hi = floor(q / 2). */
#define RFF_QUADRANT_BITS(q, odd, hi)                        \
    double hi = RFF_RINT(((q) - 0.5) * 0.5);                 \
    double odd = (q) - 2.0 * hi;

/* Cosine alone with one polynomial: x = h pi/2 + r with h = 2n + 1 odd and
   |r| <= pi/2, so cos x = (-1)^(n+1) sin r; sin r by its Taylor series to
   r^21 (the first term left out is below 2e-18 on [-pi/2, pi/2]). */
RFF_INLINE double rff_cos_fast(double x)
{
    double n = RFF_RINT(x * RFF_ONE_OVER_PI - 0.5);
    double h = 2.0 * n + 1.0;
    double r = ((x - h * RFF_PIO2_1) - h * RFF_PIO2_2) - h * RFF_PIO2_3;
    double z = r * r;
    double p = RFF_T1 + z * (RFF_T2 + z * (RFF_T3 + z * (RFF_T4 + z * (RFF_T5 +
               z * (RFF_T6 + z * (RFF_T7 + z * (RFF_T8 + z * (RFF_T9 + z * RFF_T10))))))));
    double sr = r + r * z * p;
    /* n mod 2 = n - 2 floor(n / 2), floor(n / 2) = round((n - 0.5) / 2) */
    double nodd = n - 2.0 * RFF_RINT((n - 0.5) * 0.5);
    return (2.0 * nodd - 1.0) * sr;
}

RFF_INLINE double rff_sin_fast(double x)
{
    double q;
    double r = rff_trig_reduce(x, &q);
    double s = rff_sin_poly(r), c = rff_cos_poly(r);
    RFF_QUADRANT_BITS(q, odd, hi)
    /* sin x = s, c, -s, -c in quadrants 0..3 */
    return (1.0 - 2.0 * hi) * (odd * c + (1.0 - odd) * s);
}

/* Both at once, sharing the reduction and the polynomials. */
RFF_INLINE void rff_sincos_fast(double x, double *sx, double *cx)
{
    double q;
    double r = rff_trig_reduce(x, &q);
    double s = rff_sin_poly(r), c = rff_cos_poly(r);
    RFF_QUADRANT_BITS(q, odd, hi)
    double neg = odd + hi - 2.0 * odd * hi;
    *cx = (1.0 - 2.0 * neg) * (odd * s + (1.0 - odd) * c);
    *sx = (1.0 - 2.0 * hi) * (odd * c + (1.0 - odd) * s);
}

#endif
