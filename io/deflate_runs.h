/* Internal: a deflate encoder (RFC 1951) for label maps, used by the parallel gzip writer (io/gzip_parallel.c).
 *
 * Label maps are long runs of one label. The encoder finds them as matches at one fixed distance, the element
 * size (1 for u8, 2 for u16, 4 for u32, so a run of any label value is a run), comparing eight bytes at a time;
 * everything else is a literal. A chunk becomes one block with its own Huffman codes (or stored blocks when
 * those are smaller), so its bytes depend only on its input. */
#ifndef VL_DEFLATE_RUNS_H
#define VL_DEFLATE_RUNS_H

#include <stddef.h>
#include <stdint.h>

/* A worker's scratch, kept from chunk to chunk: zero it before the first use, release it with
 * vl_deflate_runs_free. */
typedef struct vl_deflate_runs {
    uint16_t *tokens;            /* 0..255 a literal, 256 + length - 3 a match */
    size_t token_capacity;
    unsigned char *joined;       /* prefix and data in one piece, when there is a prefix */
    size_t joined_capacity;
} vl_deflate_runs;

/* Raw deflate of `prefix` (may be empty) followed by `data`, from an empty window, into `out` (`capacity`
 * bytes; compressBound of the input plus 64 always suffices): one block, final when `last`; a chunk that is
 * not last ends with an empty stored block (a sync flush), so it ends on a byte boundary and chunks join into
 * one stream. `period` is the match distance, 1..4 (the element size). Returns the bytes written, 0 when
 * memory or `capacity` ran out. */
size_t vl_deflate_runs_chunk(vl_deflate_runs *scratch, const unsigned char *prefix, size_t prefix_bytes,
                             const unsigned char *data, size_t bytes, unsigned period, int last, unsigned char *out,
                             size_t capacity);

void vl_deflate_runs_free(vl_deflate_runs *scratch);

#endif
