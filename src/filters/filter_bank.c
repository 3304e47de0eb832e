/* The filter bank's definition: defaults, validation, channel count and names. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "filters/filters_internal.h"

static const double ilastik_sigmas[] = {0.3, 0.7, 1.0, 1.6, 3.5, 5.0, 10.0};

void vl_filter_bank_default(vl_filter_bank *bank, int dims)
{
    memset(bank, 0, sizeof *bank);
    bank->dims = dims;
    bank->truncate = 4.0;
    bank->dog_ratio = 0.66;
    bank->st_inner_ratio = 0.5;
    vl_filter_bank_set_sigmas(bank, ilastik_sigmas, (int)(sizeof ilastik_sigmas / sizeof ilastik_sigmas[0]));
}

vl_status vl_filter_bank_set_sigmas(vl_filter_bank *bank, const double *sigmas, int count)
{
    if (count < 1 || count > VL_FILTER_MAX_SIGMAS)
        return vl_fail(VL_ERR_ARGUMENT, "sigmas: give 1 to %d values, not %d", VL_FILTER_MAX_SIGMAS, count);
    for (int s = 0; s < count; s++) {
        if (!(sigmas[s] > 0 && sigmas[s] <= 100))
            return vl_fail(VL_ERR_ARGUMENT, "sigmas: %g mm is not in (0, 100]", sigmas[s]);
        bank->sigmas[s] = sigmas[s];
        bank->families[s] = sigmas[s] < 0.5 ? VL_FAMILY_SMOOTHING : VL_FAMILY_ALL;
    }
    bank->sigma_count = count;
    return VL_OK;
}

/* splitmix64: the offsets are a pure function of the seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

vl_status vl_filter_bank_add_offsets(vl_filter_bank *bank, int count, double radius_mm, const double spacing[3],
                                     uint64_t seed)
{
    if (count < 0 || bank->offset_count + count > VL_FILTER_MAX_OFFSETS)
        return vl_fail(VL_ERR_ARGUMENT, "offsets: at most %d offset features", VL_FILTER_MAX_OFFSETS);
    if (!(radius_mm > 0 && radius_mm <= 200))
        return vl_fail(VL_ERR_ARGUMENT, "offset radius: %g mm is not in (0, 200]", radius_mm);
    int reach[3] = {0, 0, 0};
    for (int a = 0; a < bank->dims; a++) {
        if (!(spacing[a] > 0))
            return vl_fail(VL_ERR_ARGUMENT, "offsets: spacing %g mm is not positive", spacing[a]);
        reach[a] = (int)floor(radius_mm / spacing[a]);
    }
    if (reach[0] + reach[1] + reach[2] == 0)
        return vl_fail(VL_ERR_ARGUMENT, "offset radius: %g mm is under one voxel", radius_mm);
    uint64_t state = seed;
    for (int k = 0; k < count; k++) {
        int32_t *o = bank->offsets[bank->offset_count + k];
        do {
            for (int j = 0; j < 6; j++) {
                const int r = reach[j % 3];
                o[j] = r ? (int32_t)(next_random(&state) % (uint64_t)(2 * r + 1)) - r : 0;
            }
        } while (o[0] == o[3] && o[1] == o[4] && o[2] == o[5]);
    }
    bank->offset_count += count;
    return VL_OK;
}

vl_status vl_filter_bank_check(const vl_filter_bank *bank)
{
    if (bank->dims != 2 && bank->dims != 3)
        return vl_fail(VL_ERR_ARGUMENT, "filter bank: dims %d is not 2 or 3", bank->dims);
    if (bank->sigma_count < 1 || bank->sigma_count > VL_FILTER_MAX_SIGMAS)
        return vl_fail(VL_ERR_ARGUMENT, "filter bank: %d sigmas (1..%d)", bank->sigma_count, VL_FILTER_MAX_SIGMAS);
    for (int s = 0; s < bank->sigma_count; s++)
        if (!(bank->sigmas[s] > 0 && bank->sigmas[s] <= 100) || !bank->families[s] ||
            (bank->families[s] & ~(unsigned)VL_FAMILY_ALL))
            return vl_fail(VL_ERR_ARGUMENT, "filter bank: sigma %d (%g mm, families %u) is not usable", s,
                           bank->sigmas[s], bank->families[s]);
    if (!(bank->truncate >= 1 && bank->truncate <= 8) || !(bank->dog_ratio > 0 && bank->dog_ratio < 1) ||
        !(bank->st_inner_ratio > 0 && bank->st_inner_ratio <= 1))
        return vl_fail(VL_ERR_ARGUMENT, "filter bank: truncate %g, DoG ratio %g or structure ratio %g out of range",
                       bank->truncate, bank->dog_ratio, bank->st_inner_ratio);
    if (bank->offset_count < 0 || bank->offset_count > VL_FILTER_MAX_OFFSETS)
        return vl_fail(VL_ERR_ARGUMENT, "filter bank: %d offset features (0..%d)", bank->offset_count,
                       VL_FILTER_MAX_OFFSETS);
    for (int k = 0; k < bank->offset_count; k++)
        for (int j = 0; j < 6; j++)
            if (bank->offsets[k][j] < -4096 || bank->offsets[k][j] > 4096 || (bank->dims == 2 && j % 3 == 2 &&
                                                                               bank->offsets[k][j]))
                return vl_fail(VL_ERR_ARGUMENT, "filter bank: offset feature %d is out of range", k);
    return VL_OK;
}

static int family_channels(unsigned family, int dims)
{
    return family == VL_FAMILY_STRUCTURE || family == VL_FAMILY_HESSIAN ? dims : 1;
}

int vl_filter_bank_channels(const vl_filter_bank *bank)
{
    int count = 0;
    for (int s = 0; s < bank->sigma_count; s++)
        for (unsigned family = 1; family <= VL_FAMILY_HESSIAN; family <<= 1)
            if (bank->families[s] & family)
                count += family_channels(family, bank->dims);
    return count + bank->offset_count;
}

void vl_filter_bank_channel_name(const vl_filter_bank *bank, int channel, char *name, size_t size)
{
    static const char *const family_names[] = {"gaussian", "log", "gradient_magnitude", "dog", "structure_eig",
                                               "hessian_eig"};
    int c = 0;
    for (int s = 0; s < bank->sigma_count; s++)
        for (int f = 0; f < 6; f++) {
            const unsigned family = 1u << f;
            if (!(bank->families[s] & family))
                continue;
            const int n = family_channels(family, bank->dims);
            if (channel < c + n) {
                if (n > 1)
                    snprintf(name, size, "%s%d_s%.2f", family_names[f], channel - c, bank->sigmas[s]);
                else
                    snprintf(name, size, "%s_s%.2f", family_names[f], bank->sigmas[s]);
                return;
            }
            c += n;
        }
    snprintf(name, size, "offset_%d", channel - c);
}

int vl_filter_bank_equal(const vl_filter_bank *a, const vl_filter_bank *b)
{
    if (a->dims != b->dims || a->sigma_count != b->sigma_count || a->truncate != b->truncate ||
        a->dog_ratio != b->dog_ratio || a->st_inner_ratio != b->st_inner_ratio || a->offset_count != b->offset_count)
        return 0;
    for (int s = 0; s < a->sigma_count; s++)
        if (a->sigmas[s] != b->sigmas[s] || a->families[s] != b->families[s])
            return 0;
    return memcmp(a->offsets, b->offsets, sizeof a->offsets[0] * (size_t)a->offset_count) == 0;
}

void vl_filter_bank_halo(const vl_filter_bank *bank, const double spacing[3], int64_t halo[3])
{
    for (int a = 0; a < 3; a++) {
        halo[a] = 0;
        if (a >= bank->dims)
            continue;
        for (int s = 0; s < bank->sigma_count; s++) {
            const double sigma_voxels = bank->sigmas[s] / spacing[a];
            int64_t need = vl_gaussian_radius(sigma_voxels, bank->truncate);
            if (bank->families[s] & VL_FAMILY_STRUCTURE)
                need += vl_gaussian_radius(sigma_voxels * bank->st_inner_ratio, bank->truncate);
            if (need > halo[a])
                halo[a] = need;
        }
    }
}
