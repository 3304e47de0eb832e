/* Internal: the forest's random draws as a pure hash of (seed, tree, node, draw), so that the CPU and the GPU,
 * whatever order they work in, draw the same numbers. Plain C that nvcc also compiles for the device. */
#ifndef VL_FOREST_RANDOM_H
#define VL_FOREST_RANDOM_H
#include <stdint.h>

#ifdef __CUDACC__
#define VL_FOREST_HD __host__ __device__
#else
#define VL_FOREST_HD
#endif

static inline VL_FOREST_HD uint64_t vl_forest_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Draw `draw` for `node` of `tree` (node = VL_FOREST_BOOTSTRAP_NODE for the bootstrap). */
#define VL_FOREST_BOOTSTRAP_NODE 0xffffffffu
static inline VL_FOREST_HD uint64_t vl_forest_random(uint64_t seed, uint32_t tree, uint32_t node, uint64_t draw)
{
    uint64_t h = vl_forest_mix(seed + 0x9e3779b97f4a7c15ull);
    h = vl_forest_mix(h ^ ((uint64_t)tree << 32 | node));
    return vl_forest_mix(h + draw * 0x9e3779b97f4a7c15ull);
}

/* Uniform in [0, n) (n < 2^32; the bias of the 64-bit modulo is below 2^-32). */
static inline VL_FOREST_HD uint32_t vl_forest_below(uint64_t random, uint32_t n) { return (uint32_t)(random % n); }

#endif
