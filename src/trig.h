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
#include <stdint.h>
#include <string.h>

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

/* 0: every type evaluated in its own precision; 16: the same for double
   (only _Float16 is widened, e.g. GCC with AVX512-FP16) */
#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 16)
/* v + 1.5 * 2^52 for |v| < 2^51 is 1.5 * 2^52 + round(v), exactly: its
   value less the constant is the rounded v, and its low mantissa bits are
   those of round(v) in two's complement, which give the quadrant (and the
   signs below) by integer operations, without comparisons. */
#define RFF_ROUND_BITS 1
#else
/* extended-precision evaluation would break the trick above */
#define RFF_ROUND_BITS 0
#endif

#define RFF_SIGN_BIT ((uint64_t) 1 << 63)

RFF_INLINE uint64_t rff_d2u(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

RFF_INLINE double rff_u2d(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* round(v) as a double and, in *bits, an integer whose low bits are those
   of round(v) (two's complement) */
RFF_INLINE double rff_round_bits(double v, uint64_t *bits)
{
#if RFF_ROUND_BITS
    double t = v + RFF_ROUND_MAGIC;
    *bits = rff_d2u(t);
    return t - RFF_ROUND_MAGIC;
#else
    double k = nearbyint(v);
    /* only the low bits matter, and only where |v| < 2^51 (elsewhere the
       caller recomputes with libm): no out-of-range conversion for huge,
       infinite or NaN v */
    *bits = (uint64_t) (int64_t) (fabs(k) < 0x1p51 ? k : 0.0);
    return k;
#endif
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

/* Whether x is in the range where rff_cos_fast()/rff_sincos_fast() are
   exact to a few ulps. Outside it they return garbage for finite x, and NaN
   (as libm does) for infinite or NaN x. */
RFF_INLINE int rff_trig_fast_ok(double x)
{
    return !(fabs(x) >= RFF_TRIG_MAX);
}

/* Cosine alone with one polynomial: x = h pi/2 - r with h = 2n + 1 odd and
   |r| <= pi/2, so cos x = (-1)^n sin r; sin r by its Taylor series to r^21
   (the first term left out is below 2e-18 on [-pi/2, pi/2]). The sign is
   the low bit of n moved to the sign bit. */
RFF_INLINE double rff_cos_fast(double x)
{
    uint64_t nb;
    double n = rff_round_bits(x * RFF_ONE_OVER_PI - 0.5, &nb);
    double h = 2.0 * n + 1.0;
    double r = ((h * RFF_PIO2_1 - x) + h * RFF_PIO2_2) + h * RFF_PIO2_3;
    double z = r * r;
    double p = RFF_T1 + z * (RFF_T2 + z * (RFF_T3 + z * (RFF_T4 + z * (RFF_T5 +
               z * (RFF_T6 + z * (RFF_T7 + z * (RFF_T8 + z * (RFF_T9 + z * RFF_T10))))))));
    double sr = r + r * z * p;
    return rff_u2d(rff_d2u(sr) ^ (nb << 63));
}

/* Both at once: x = k pi/2 + r with |r| <= pi/4, both polynomials of r, and
   the quadrant k mod 4 picks and signs them: sin x = s, c, -s, -c and
   cos x = c, -s, -c, s for k mod 4 = 0..3. Bit 0 of k swaps s and c, bit 1
   is the sign of sin x, bit 0 xor bit 1 that of cos x. */
RFF_INLINE void rff_sincos_fast(double x, double *sx, double *cx)
{
    uint64_t kb;
    double k = rff_round_bits(x * RFF_TWO_OVER_PI, &kb);
    double r = ((x - k * RFF_PIO2_1) - k * RFF_PIO2_2) - k * RFF_PIO2_3;
    uint64_t s = rff_d2u(rff_sin_poly(r)), c = rff_d2u(rff_cos_poly(r));
    uint64_t odd = (uint64_t) 0 - (kb & 1);  /* all ones when k is odd */
    uint64_t hi = (kb << 62) & RFF_SIGN_BIT;
    *sx = rff_u2d(((c & odd) | (s & ~odd)) ^ hi);
    *cx = rff_u2d(((s & odd) | (c & ~odd)) ^ (hi ^ (kb << 63)));
}

#endif
