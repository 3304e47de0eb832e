/* io/deflate_runs.c against zlib's inflate: chunks of label-like runs (u8, u16, u32 periods), of incompressible
 * bytes (stored blocks), with a prefix, empty, and with skewed symbol counts that need length-limited codes;
 * chunks joined as the gzip writer joins them inflate to the joined input, and the same input gives the same
 * bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "deflate_runs.h"

static int failures;

#define CHECK(condition, ...)                                                                                      \
    do {                                                                                                           \
        if (!(condition)) {                                                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                   \
            fprintf(stderr, __VA_ARGS__);                                                                          \
            fprintf(stderr, "\n");                                                                                 \
            failures++;                                                                                            \
        }                                                                                                          \
    } while (0)

static uint64_t state = 88172645463325252ULL;
static uint32_t next_random(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)(state >> 16);
}

/* Raw inflate of `in` into `out`; returns the bytes inflated, or (size_t)-1 unless the stream ended exactly. */
static size_t inflate_all(const unsigned char *in, size_t in_bytes, unsigned char *out, size_t capacity)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK)
        return (size_t)-1;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)in_bytes;
    z.next_out = out;
    z.avail_out = (uInt)capacity;
    const int result = inflate(&z, Z_FINISH);
    const size_t produced = capacity - z.avail_out;
    const int whole = result == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    return whole ? produced : (size_t)-1;
}

/* Deflates `data` in chunks of `chunk` bytes (the first with `prefix`), joins them and inflates them back. */
static void round_trip(const char *name, const unsigned char *prefix, size_t prefix_bytes, const unsigned char *data,
                       size_t bytes, size_t chunk, unsigned period)
{
    const size_t chunks = bytes ? (bytes + chunk - 1) / chunk : 1;
    const size_t capacity = compressBound((uLong)(chunk + prefix_bytes)) + 64;
    unsigned char *joined = malloc(chunks * capacity), *slot = malloc(capacity);
    unsigned char *expected = malloc(prefix_bytes + bytes + 1), *back = malloc(prefix_bytes + bytes + 1);
    vl_deflate_runs scratch = {0};
    size_t total = 0;
    int ok = joined && slot && expected && back;
    for (size_t c = 0; ok && c < chunks; c++) {
        const size_t first = c * chunk, length = bytes - first < chunk ? bytes - first : chunk;
        const size_t written = vl_deflate_runs_chunk(&scratch, c ? NULL : prefix, c ? 0 : prefix_bytes,
                                                     data + first, length, period, c + 1 == chunks, slot, capacity);
        CHECK(written > 0, "%s: chunk %zu not written", name, c);
        ok = written > 0;
        /* The same chunk again gives the same bytes. */
        unsigned char *again = malloc(capacity);
        const size_t rewritten = again ? vl_deflate_runs_chunk(&scratch, c ? NULL : prefix, c ? 0 : prefix_bytes,
                                                               data + first, length, period, c + 1 == chunks, again,
                                                               capacity)
                                       : 0;
        CHECK(rewritten == written && memcmp(again, slot, written) == 0, "%s: chunk %zu not deterministic", name, c);
        free(again);
        memcpy(joined + total, slot, written);
        total += written;
    }
    if (ok) {
        memcpy(expected, prefix, prefix_bytes);
        memcpy(expected + prefix_bytes, data, bytes);
        const size_t inflated = inflate_all(joined, total, back, prefix_bytes + bytes + 1);
        CHECK(inflated == prefix_bytes + bytes, "%s: inflated %zu bytes, expected %zu", name, inflated,
              prefix_bytes + bytes);
        if (inflated == prefix_bytes + bytes)
            CHECK(memcmp(back, expected, inflated) == 0, "%s: inflated bytes differ", name);
        printf("%-28s %10zu -> %8zu bytes in %zu chunk(s)\n", name, prefix_bytes + bytes, total, chunks);
    }
    vl_deflate_runs_free(&scratch);
    free(joined);
    free(slot);
    free(expected);
    free(back);
}

/* A label-like map of `element`-byte little-endian labels: zero background with boxes of labels up to `most`. */
static unsigned char *label_map(size_t voxels, unsigned element, uint32_t most)
{
    unsigned char *data = calloc(voxels, element);
    if (!data)
        return NULL;
    for (int box = 0; box < 400; box++) {
        const size_t start = next_random() % voxels, length = next_random() % 5000;
        const uint32_t label = 1 + next_random() % most;
        for (size_t v = start; v < start + length && v < voxels; v++)
            for (unsigned b = 0; b < element; b++)
                data[v * element + b] = (unsigned char)(label >> (8 * b));
    }
    return data;
}

int main(void)
{
    const size_t mib = (size_t)1 << 20;
    unsigned char header[352];
    for (size_t i = 0; i < sizeof header; i++)
        header[i] = (unsigned char)(i < 100 ? 0 : i * 7);

    round_trip("empty", NULL, 0, (const unsigned char *)"", 0, mib, 1);
    round_trip("prefix only", header, sizeof header, (const unsigned char *)"", 0, mib, 1);
    round_trip("one byte", NULL, 0, (const unsigned char *)"x", 1, mib, 1);
    round_trip("three equal bytes", NULL, 0, (const unsigned char *)"aaaa", 4, mib, 1);

    unsigned char *noise = malloc(3 * mib);
    for (size_t i = 0; noise && i < 3 * mib; i++)
        noise[i] = (unsigned char)next_random();
    if (noise) {
        round_trip("random 100 bytes", NULL, 0, noise, 100, mib, 1);
        round_trip("random 70000 bytes", NULL, 0, noise, 70000, mib, 1);
        round_trip("random 3 MiB", header, sizeof header, noise, 3 * mib, mib, 2);
    }

    unsigned char *zeros = calloc(2 * mib + 17, 1);
    if (zeros)
        round_trip("zeros", header, sizeof header, zeros, 2 * mib + 17, mib, 1);

    unsigned char *u8 = label_map(5 * mib + 3, 1, 200);
    if (u8)
        round_trip("u8 labels", header, sizeof header, u8, 5 * mib + 3, mib, 1);
    unsigned char *u16 = label_map(2 * mib + 1, 2, 60000);
    if (u16) {
        round_trip("u16 labels, period 2", header, sizeof header, u16, 2 * (2 * mib + 1), mib, 2);
        round_trip("u16 labels, period 1", header, sizeof header, u16, 2 * (2 * mib + 1), mib, 1);
    }
    unsigned char *u32 = label_map(mib + 5, 4, 4000000);
    if (u32)
        round_trip("u32 labels, period 4", NULL, 0, u32, 4 * (mib + 5), mib, 4);

    /* Literal counts in a Fibonacci series: unlimited Huffman codes would be over 15 bits deep. */
    enum { symbols = 30 };
    size_t counts[symbols], total = 0;
    for (int s = 0; s < symbols; s++) {
        counts[s] = s < 2 ? 1 : counts[s - 1] + counts[s - 2];
        total += counts[s];
    }
    unsigned char *skewed = malloc(total);
    if (skewed) {
        size_t at = 0;
        for (int s = 0; s < symbols; s++)
            for (size_t k = 0; k < counts[s]; k++)
                skewed[at++] = (unsigned char)(s * 3);
        for (size_t i = total - 1; i > 0; i--) { /* shuffled, so most are literals */
            const size_t j = next_random() % (i + 1);
            const unsigned char t = skewed[i];
            skewed[i] = skewed[j];
            skewed[j] = t;
        }
        round_trip("skewed literals", NULL, 0, skewed, total, total, 1);
    }
    CHECK(noise && zeros && u8 && u16 && u32 && skewed, "out of memory");
    free(noise);
    free(zeros);
    free(u8);
    free(u16);
    free(u32);
    free(skewed);
    if (failures)
        fprintf(stderr, "%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
