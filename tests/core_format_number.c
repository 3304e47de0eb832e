/* vl_format_g12 against the C library's own "%.12g" on millions of values: random bit patterns over every
 * magnitude, short decimals, near-halves (13 significant digits ending in 5), the neighbours of every power
 * of ten and the specials. Any difference is a failure. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/format_number.h"
#include "test_check.h"

static long checked;

static void check(double value)
{
    char expected[64], got[64];
    snprintf(expected, sizeof expected, "%.12g", value);
    const size_t n = vl_format_g12(got, value);
    got[n] = 0;
    checked++;
    CHECK(strcmp(expected, got) == 0, "%.17g (%a): printf '%s', vl_format_g12 '%s'", value, value, expected, got);
}

static void check_both_signs(double value)
{
    check(value);
    check(-value);
}

int main(void)
{
    const double specials[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, DBL_MIN, DBL_MAX, DBL_TRUE_MIN, 1e-4, 1e12,
                               999999999999.5, 999999999999.49, 0.5, 2.5, 0.125, 1.0 / 3, 2.0 / 3, 123456789012.5};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        check_both_signs(specials[i]);
    /* Every magnitude: random mantissas with exponents from 1e-9 to 1e14. */
    for (int i = 0; i < 2000000; i++) {
        const double mantissa = (double)(test_random() >> 11) / 9007199254740992.0;
        check_both_signs(ldexp(0.5 + mantissa / 2, (int)(test_random() % 78) - 30));
    }
    /* Short decimals, as means and millimetres often are, and exact binary fractions. */
    for (int i = 0; i < 1000000; i++) {
        const double n = (double)(test_random() % 100000000000000ull);
        check_both_signs(n / pow(10, (int)(test_random() % 16)));
        check_both_signs(n / (double)(1ull << (test_random() % 40)));
    }
    /* Near-halves: 13 significant digits ending in 5, at every decimal exponent %.12g writes as a fraction. */
    for (int i = 0; i < 1000000; i++) {
        const double digits = (double)(100000000000ull + test_random() % 900000000000ull) * 10 + 5;
        check_both_signs(digits * pow(10, (int)(test_random() % 16) - 16));
    }
    /* The neighbours of every power of ten around the switches between styles and digit counts. */
    for (int e = -6; e <= 13; e++) {
        double x = pow(10, e);
        for (int step = 0; step < 2000; step++)
            x = nextafter(x, 0);
        for (int step = 0; step < 4000; step++) {
            check_both_signs(x);
            x = nextafter(x, INFINITY);
        }
    }
    printf("core_format_number: %ld values against printf's %%.12g, %d differ\n", checked, failures);
    return test_finish("core_format_number");
}
