/* Decimal text without printf. printf's %.12g spends about a microsecond in multi-precision arithmetic on
 * every field; here a value's twelve digits come from one multiplication in 80-bit long double, which is
 * exact enough to round correctly everywhere but within 1e-6 of a half, where printf still decides. */
#include "core/format_number.h"

#include <float.h>
#include <math.h>
#include <stdio.h>

size_t vl_format_unsigned(char *out, unsigned long long value)
{
    char digits[24];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

size_t vl_format_signed(char *out, long long value)
{
    if (value >= 0)
        return vl_format_unsigned(out, (unsigned long long)value);
    out[0] = '-';
    return 1 + vl_format_unsigned(out + 1, 0ull - (unsigned long long)value);
}

static size_t format_g12_printf(char *out, double value)
{
    char text[40];
    const int n = snprintf(text, sizeof text, "%.12g", value);
    for (int i = 0; i < n; i++)
        out[i] = text[i];
    return n > 0 ? (size_t)n : 0;
}

/* The twelve significant digits of m (1e-4 <= m < 1e12) rounded to nearest, as an integer in
 * [1e11, 1e12], and the decimal exponent of the leading digit; 0 where the rounding is too close to call.
 * The scaled value s < 2^40 carries an error under 2^-24 (one long double rounding of exact operands:
 * 10^k, k <= 15, is exact), so only fractions near one half are in doubt. */
static unsigned long long twelve_digits(double m, int *exponent)
{
    static const long double power[] = {1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L,
                                        1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L};
    /* The binary exponent puts the decimal one within 1 (log10(2) = 0.30103); a table settles it. */
    static const double ten[] = {1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3,
                                 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
    int binary;
    frexp(m, &binary);
    int e = (int)floor((binary - 1) * 0.30102999566398120);
    if (e + 1 <= 12 && m >= ten[e + 1 + 5])
        e++;
    e = e < -4 ? -4 : e > 11 ? 11 : e;
    long double s = (long double)m * power[11 - e];
    if (s < 1e11L && e > -4)
        s = (long double)m * power[11 - --e];
    else if (s >= 1e12L && e < 11)
        s = (long double)m * power[11 - ++e];
    if (s < 1e11L || s >= 1e12L)
        return 0;
    unsigned long long digits = (unsigned long long)s;
    const long double fraction = s - (long double)digits;
    if (fabsl(fraction - 0.5L) < 1e-6L)
        return 0;
    digits += fraction > 0.5L;
    if (digits == 1000000000000ull) {
        digits /= 10;
        e++;
    }
    *exponent = e;
    return digits;
}

size_t vl_format_g12(char *out, double value)
{
    const double m = fabs(value);
    /* Integers below 10^12 are what %.12g prints for them; -0 is not ("-0"). */
    if (m < 1e12 && value == (double)(long long)value && !(value == 0 && signbit(value)))
        return vl_format_signed(out, (long long)value);
    int exponent = 0;
    /* Where long double is no wider than double (not x86-64 Linux) the error bound fails: printf decides. */
    const int wide_enough = LDBL_MANT_DIG >= 64;
    const unsigned long long digits = wide_enough && m >= 1e-4 && m < 1e12 ? twelve_digits(m, &exponent) : 0;
    /* Outside [1e-4, 1e12) %.12g switches to an exponent; NaN, infinities and near-halves go to printf. */
    if (!digits || exponent > 11)
        return format_g12_printf(out, value);
    char text[12];
    vl_format_unsigned(text, digits);
    int used = 12;
    while (text[used - 1] == '0')
        used--;
    size_t n = 0;
    if (signbit(value))
        out[n++] = '-';
    if (exponent >= 0) {
        for (int i = 0; i <= exponent; i++)
            out[n++] = text[i];
        if (used > exponent + 1) {
            out[n++] = '.';
            for (int i = exponent + 1; i < used; i++)
                out[n++] = text[i];
        }
    } else {
        out[n++] = '0';
        out[n++] = '.';
        for (int i = -1; i > exponent; i--)
            out[n++] = '0';
        for (int i = 0; i < used; i++)
            out[n++] = text[i];
    }
    return n;
}
