/* A deflate encoder for label maps (io/deflate_runs.h): runs become matches at one distance, the rest literals,
 * one dynamic-Huffman block per chunk. Code lengths are minimum-redundancy (Moffat and Katajainen's in-place
 * method) limited to deflate's 15 bits (7 for the code-length code) by moving the overflow one level down the
 * tree until the Kraft sum is exact; every tree gets at least two codes, as zlib's trees do, so each code is
 * complete and every inflater accepts it. */
#include <stdlib.h>
#include <string.h>

#include "deflate_runs.h"

enum {
    min_match = 3,
    max_match = 258,
    length_symbols = 286, /* 0..255 literals, 256 end of block, 257..285 lengths */
    distance_symbols = 30,
    code_length_symbols = 19,
    max_stored = 65535,
};

static const uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint8_t code_length_order[code_length_symbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                               11, 4,  12, 3, 13, 2, 14, 1, 15};

/* The length code (0..28, symbol 257 + code) of a match of `length` bytes, 3..258. */
static unsigned length_code(unsigned length)
{
    unsigned code = 28;
    while (length_base[code] > length)
        code--;
    return code;
}

/* ---- bits, least significant first ---- */

typedef struct bit_writer {
    unsigned char *at, *end;
    uint64_t pending;
    unsigned count;
    int overflow;
} bit_writer;

static void put_bits(bit_writer *w, uint32_t value, unsigned bits)
{
    w->pending |= (uint64_t)value << w->count;
    w->count += bits;
    if (w->count >= 32) {
        if (w->end - w->at < 4) {
            w->overflow = 1;
            w->at = w->end;
        } else {
            for (int i = 0; i < 4; i++)
                *w->at++ = (unsigned char)(w->pending >> (8 * i));
        }
        w->pending >>= 32;
        w->count -= 32;
    }
}

/* Pads with zero bits to the next byte boundary and writes out what is pending. */
static void align_bits(bit_writer *w)
{
    while (w->count > 0) {
        if (w->at == w->end) {
            w->overflow = 1;
            break;
        }
        *w->at++ = (unsigned char)w->pending;
        w->pending >>= 8;
        w->count = w->count > 8 ? w->count - 8 : 0;
    }
    w->pending = 0;
    w->count = 0;
}

static void put_bytes(bit_writer *w, const unsigned char *data, size_t bytes)
{
    if ((size_t)(w->end - w->at) < bytes) {
        w->overflow = 1;
        w->at = w->end;
        return;
    }
    memcpy(w->at, data, bytes);
    w->at += bytes;
}

/* ---- Huffman codes ---- */

typedef struct weighted {
    uint32_t key; /* the weight, then in place the tree links and the depths */
    uint16_t symbol;
} weighted;

static int by_weight(const void *a, const void *b)
{
    const weighted *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->symbol < y->symbol ? -1 : x->symbol > y->symbol;
}

/* Moffat and Katajainen: `a` sorted by ascending weight, n >= 2; leaves each key the code length of its symbol. */
static void minimum_redundancy(weighted *a, int n)
{
    a[0].key += a[1].key;
    int root = 0, leaf = 2;
    for (int next = 1; next < n - 1; next++) {
        if (leaf >= n || a[root].key < a[leaf].key) {
            a[next].key = a[root].key;
            a[root++].key = (uint32_t)next;
        } else {
            a[next].key = a[leaf++].key;
        }
        if (leaf >= n || (root < next && a[root].key < a[leaf].key)) {
            a[next].key += a[root].key;
            a[root++].key = (uint32_t)next;
        } else {
            a[next].key += a[leaf++].key;
        }
    }
    a[n - 2].key = 0;
    for (int next = n - 3; next >= 0; next--)
        a[next].key = a[a[next].key].key + 1;
    int available = 1, used = 0, depth = 0, next = n - 1;
    root = n - 2;
    while (available > 0) {
        while (root >= 0 && (int)a[root].key == depth) {
            used++;
            root--;
        }
        while (available > used) {
            a[next--].key = (uint32_t)depth;
            available--;
        }
        available = 2 * used;
        depth++;
        used = 0;
    }
}

/* Code lengths of at most `limit` bits for the `n` symbols weighted by `frequency`: zero for unused symbols,
 * except that at least two symbols always get a code. */
static void code_lengths(const uint32_t *frequency, int n, int limit, uint8_t *lengths)
{
    weighted symbols[length_symbols];
    int used = 0;
    for (int s = 0; s < n; s++)
        if (frequency[s])
            symbols[used++] = (weighted){frequency[s], (uint16_t)s};
    for (int s = 0; used < 2 && s < n; s++)
        if (!frequency[s])
            symbols[used++] = (weighted){0, (uint16_t)s};
    qsort(symbols, (size_t)used, sizeof *symbols, by_weight);
    minimum_redundancy(symbols, used);
    unsigned per_length[length_symbols + 1] = {0};
    for (int i = 0; i < used; i++)
        per_length[symbols[i].key]++;
    /* Codes deeper than the limit move up to it; then, while the Kraft sum is over, one code at the limit goes
     * and a shallower leaf becomes two one level deeper, which lowers the sum by one unit each time. */
    for (int depth = limit + 1; depth <= length_symbols; depth++) {
        per_length[limit] += per_length[depth];
        per_length[depth] = 0;
    }
    uint32_t kraft = 0;
    for (int depth = limit; depth > 0; depth--)
        kraft += per_length[depth] << (limit - depth);
    while (kraft != (uint32_t)1 << limit) {
        per_length[limit]--;
        for (int depth = limit - 1; depth > 0; depth--)
            if (per_length[depth]) {
                per_length[depth]--;
                per_length[depth + 1] += 2;
                break;
            }
        kraft--;
    }
    memset(lengths, 0, (size_t)n);
    for (int depth = 1, next = used; depth <= limit; depth++) /* the heaviest symbols get the shortest codes */
        for (unsigned k = per_length[depth]; k > 0; k--)
            lengths[symbols[--next].symbol] = (uint8_t)depth;
}

/* Canonical codes from lengths (RFC 1951 3.2.2), bit-reversed for least-significant-first output. */
static void canonical_codes(const uint8_t *lengths, int n, uint16_t *codes)
{
    unsigned count[16] = {0}, next[16] = {0};
    for (int s = 0; s < n; s++)
        count[lengths[s]]++;
    count[0] = 0;
    unsigned code = 0;
    for (int bits = 1; bits < 16; bits++) {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    for (int s = 0; s < n; s++) {
        const unsigned bits = lengths[s];
        if (!bits) {
            codes[s] = 0;
            continue;
        }
        const unsigned value = next[bits]++;
        unsigned reversed = 0;
        for (unsigned b = 0; b < bits; b++)
            reversed |= ((value >> b) & 1u) << (bits - 1 - b);
        codes[s] = (uint16_t)reversed;
    }
}

/* ---- tokens ---- */

/* Bytes from p[0] on equal to those `distance` before them, at most `most`. */
static size_t run_length(const unsigned char *p, size_t distance, size_t most)
{
    size_t k = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (; k + 8 <= most; k += 8) {
        uint64_t here, before;
        memcpy(&here, p + k, 8);
        memcpy(&before, p + k - distance, 8);
        if (here != before)
            return k + (size_t)(__builtin_ctzll(here ^ before) >> 3);
    }
#endif
    while (k < most && p[k] == p[k - distance])
        k++;
    return k;
}

static int grow_tokens(vl_deflate_runs *scratch, size_t needed)
{
    size_t capacity = scratch->token_capacity ? scratch->token_capacity : (size_t)1 << 16;
    while (capacity < needed)
        capacity *= 2;
    uint16_t *grown = realloc(scratch->tokens, capacity * sizeof *grown);
    if (!grown)
        return 0;
    scratch->tokens = grown;
    scratch->token_capacity = capacity;
    return 1;
}

/* Tokens of `data`; their symbol counts into `lengths_seen` (lengths as symbols 257..285); *matches counts the
 * matches. Returns the token count, or SIZE_MAX without memory. */
static size_t tokenize(vl_deflate_runs *scratch, const unsigned char *data, size_t bytes, size_t distance,
                       uint32_t *frequency, uint32_t *matches)
{
    size_t count = 0;
    for (size_t i = 0; i < bytes;) {
        if (count == scratch->token_capacity && !grow_tokens(scratch, count + 1))
            return SIZE_MAX;
        size_t run = 0;
        if (i >= distance)
            run = run_length(data + i, distance, bytes - i < max_match ? bytes - i : max_match);
        if (run >= min_match) {
            scratch->tokens[count++] = (uint16_t)(256 + run - min_match);
            frequency[257 + length_code((unsigned)run)]++;
            (*matches)++;
            i += run;
        } else {
            scratch->tokens[count++] = data[i];
            frequency[data[i]]++;
            i++;
        }
    }
    return count;
}

/* ---- blocks ---- */

static void stored_blocks(bit_writer *w, const unsigned char *data, size_t bytes, int last)
{
    size_t done = 0;
    do {
        const size_t piece = bytes - done < max_stored ? bytes - done : max_stored;
        put_bits(w, last && done + piece == bytes, 1);
        put_bits(w, 0, 2);
        align_bits(w);
        const unsigned char header[4] = {(unsigned char)piece, (unsigned char)(piece >> 8),
                                         (unsigned char)~piece, (unsigned char)(~piece >> 8)};
        put_bytes(w, header, sizeof header);
        put_bytes(w, data + done, piece);
        done += piece;
    } while (done < bytes);
}

typedef struct dynamic_header {
    int literal_count, distance_count, code_length_count;
    uint8_t sequence[length_symbols + distance_symbols]; /* the code-length code's symbols */
    uint8_t extra[length_symbols + distance_symbols];    /* and their repeat counts */
    int sequence_length;
    uint8_t code_length_lengths[code_length_symbols];
    uint16_t code_length_codes[code_length_symbols];
} dynamic_header;

/* Run-length codes the lengths of both trees (repeats may cross from one to the other) and builds their code. */
static void plan_header(const uint8_t *literal_lengths, const uint8_t *distance_lengths, dynamic_header *h)
{
    h->literal_count = length_symbols;
    while (h->literal_count > 257 && !literal_lengths[h->literal_count - 1])
        h->literal_count--;
    h->distance_count = distance_symbols;
    while (h->distance_count > 1 && !distance_lengths[h->distance_count - 1])
        h->distance_count--;
    uint8_t all[length_symbols + distance_symbols];
    memcpy(all, literal_lengths, (size_t)h->literal_count);
    memcpy(all + h->literal_count, distance_lengths, (size_t)h->distance_count);
    const int total = h->literal_count + h->distance_count;
    uint32_t frequency[code_length_symbols] = {0};
    h->sequence_length = 0;
#define EMIT(symbol, repeat) \
    (h->sequence[h->sequence_length] = (uint8_t)(symbol), h->extra[h->sequence_length++] = (uint8_t)(repeat), \
     frequency[symbol]++)
    for (int i = 0; i < total;) {
        const uint8_t value = all[i];
        int run = 1;
        while (i + run < total && all[i + run] == value)
            run++;
        i += run;
        if (value == 0) {
            for (; run >= 11; run -= run < 138 ? run : 138)
                EMIT(18, (run < 138 ? run : 138) - 11);
            if (run >= 3) {
                EMIT(17, run - 3);
                run = 0;
            }
        } else {
            EMIT(value, 0);
            run--;
            for (; run >= 3; run -= run < 6 ? run : 6)
                EMIT(16, (run < 6 ? run : 6) - 3);
        }
        for (; run > 0; run--)
            EMIT(value, 0);
    }
#undef EMIT
    code_lengths(frequency, code_length_symbols, 7, h->code_length_lengths);
    canonical_codes(h->code_length_lengths, code_length_symbols, h->code_length_codes);
    h->code_length_count = code_length_symbols;
    while (h->code_length_count > 4 && !h->code_length_lengths[code_length_order[h->code_length_count - 1]])
        h->code_length_count--;
}

static const uint8_t repeat_bits[code_length_symbols] = {[16] = 2, [17] = 3, [18] = 7};

static uint64_t header_bits(const dynamic_header *h)
{
    uint64_t bits = 3 + 5 + 5 + 4 + 3 * (uint64_t)h->code_length_count;
    for (int i = 0; i < h->sequence_length; i++)
        bits += h->code_length_lengths[h->sequence[i]] + repeat_bits[h->sequence[i]];
    return bits;
}

static void put_header(bit_writer *w, const dynamic_header *h, int last)
{
    put_bits(w, last ? 1 : 0, 1);
    put_bits(w, 2, 2);
    put_bits(w, (uint32_t)(h->literal_count - 257), 5);
    put_bits(w, (uint32_t)(h->distance_count - 1), 5);
    put_bits(w, (uint32_t)(h->code_length_count - 4), 4);
    for (int k = 0; k < h->code_length_count; k++)
        put_bits(w, h->code_length_lengths[code_length_order[k]], 3);
    for (int i = 0; i < h->sequence_length; i++) {
        const unsigned symbol = h->sequence[i];
        put_bits(w, h->code_length_codes[symbol], h->code_length_lengths[symbol]);
        if (repeat_bits[symbol])
            put_bits(w, h->extra[i], repeat_bits[symbol]);
    }
}

size_t vl_deflate_runs_chunk(vl_deflate_runs *scratch, const unsigned char *prefix, size_t prefix_bytes,
                             const unsigned char *data, size_t bytes, unsigned period, int last, unsigned char *out,
                             size_t capacity)
{
    const size_t distance = period >= 1 && period <= 4 ? period : 1;
    if (prefix_bytes) { /* the first chunk: header and voxels as one piece, so runs may cross between them */
        if (scratch->joined_capacity < prefix_bytes + bytes) {
            unsigned char *grown = realloc(scratch->joined, prefix_bytes + bytes);
            if (!grown)
                return 0;
            scratch->joined = grown;
            scratch->joined_capacity = prefix_bytes + bytes;
        }
        memcpy(scratch->joined, prefix, prefix_bytes);
        if (bytes)
            memcpy(scratch->joined + prefix_bytes, data, bytes);
        data = scratch->joined;
        bytes += prefix_bytes;
    }
    bit_writer w = {.at = out, .end = out + capacity};
    if (bytes == 0) {
        if (last) { /* an empty final block with the fixed code: its end-of-block symbol is 7 zero bits */
            put_bits(&w, 1, 1);
            put_bits(&w, 1, 2);
            put_bits(&w, 0, 7);
        }
    } else {
        uint32_t frequency[length_symbols] = {0}, distance_frequency[distance_symbols] = {0}, matches = 0;
        const size_t count = tokenize(scratch, data, bytes, distance, frequency, &matches);
        if (count == SIZE_MAX)
            return 0;
        frequency[256] = 1;
        distance_frequency[distance - 1] = matches;
        uint8_t literal_lengths[length_symbols], distance_lengths[distance_symbols];
        code_lengths(frequency, length_symbols, 15, literal_lengths);
        code_lengths(distance_frequency, distance_symbols, 15, distance_lengths);
        dynamic_header header;
        plan_header(literal_lengths, distance_lengths, &header);
        uint64_t bits = header_bits(&header) + (uint64_t)matches * distance_lengths[distance - 1];
        for (int s = 0; s < length_symbols; s++)
            bits += (uint64_t)frequency[s] * (literal_lengths[s] + (s > 256 ? length_extra[s - 257] : 0));
        const uint64_t stored = bytes + 5 * ((bytes + max_stored - 1) / max_stored);
        if (bits / 8 + 1 >= stored) {
            stored_blocks(&w, data, bytes, last);
        } else {
            uint16_t literal_codes[length_symbols], distance_codes[distance_symbols];
            canonical_codes(literal_lengths, length_symbols, literal_codes);
            canonical_codes(distance_lengths, distance_symbols, distance_codes);
            put_header(&w, &header, last);
            const uint16_t distance_code = distance_codes[distance - 1];
            const unsigned distance_length = distance_lengths[distance - 1];
            for (size_t t = 0; t < count && !w.overflow; t++) {
                const unsigned token = scratch->tokens[t];
                if (token < 256) {
                    put_bits(&w, literal_codes[token], literal_lengths[token]);
                    continue;
                }
                const unsigned length = token - 256 + min_match, code = length_code(length);
                put_bits(&w, literal_codes[257 + code], literal_lengths[257 + code]);
                if (length_extra[code])
                    put_bits(&w, length - length_base[code], length_extra[code]);
                put_bits(&w, distance_code, distance_length);
            }
            put_bits(&w, literal_codes[256], literal_lengths[256]);
        }
    }
    if (!last) { /* sync flush: an empty stored block */
        static const unsigned char empty[4] = {0, 0, 0xff, 0xff};
        put_bits(&w, 0, 3);
        align_bits(&w);
        put_bytes(&w, empty, sizeof empty);
    }
    align_bits(&w);
    return w.overflow ? 0 : (size_t)(w.at - out);
}

void vl_deflate_runs_free(vl_deflate_runs *scratch)
{
    free(scratch->tokens);
    free(scratch->joined);
    memset(scratch, 0, sizeof *scratch);
}
