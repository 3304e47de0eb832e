/* The .vlrf model file (docs/forest.md): little-endian, versioned, fields in a fixed order; every count is
 * checked against its limits and against the bytes present before anything is allocated from it. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "forest/forest_internal.h"
#include "voxlabel/atomic_file.h"

static const char magic[4] = {'V', 'L', 'R', 'F'};
static const char end_magic[4] = {'F', 'R', 'L', 'V'};

typedef struct writer {
    FILE *out;
    int failed;
} writer;

static void put(writer *w, const void *data, size_t bytes)
{
    if (!w->failed && bytes && fwrite(data, 1, bytes, w->out) != bytes)
        w->failed = 1;
}
static void put_u32(writer *w, uint32_t v) { put(w, &v, 4); }
static void put_u64(writer *w, uint64_t v) { put(w, &v, 8); }
static void put_f64(writer *w, double v) { put(w, &v, 8); }

vl_status vl_forest_save(const vl_forest *forest, const char *path, int force)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, force, "wb", &out);
    if (status != VL_OK)
        return status;
    writer w = {out, 0};
    const vl_filter_bank *bank = &forest->bank;
    put(&w, magic, 4);
    put_u32(&w, VL_FOREST_FORMAT_VERSION);
    put_u32(&w, (uint32_t)bank->dims);
    put_u32(&w, (uint32_t)bank->sigma_count);
    for (int s = 0; s < bank->sigma_count; s++)
        put_f64(&w, bank->sigmas[s]);
    for (int s = 0; s < bank->sigma_count; s++)
        put_u32(&w, bank->families[s]);
    put_f64(&w, bank->truncate);
    put_f64(&w, bank->dog_ratio);
    put_f64(&w, bank->st_inner_ratio);
    put_u32(&w, (uint32_t)bank->offset_count);
    put(&w, bank->offsets, sizeof(int32_t) * 6 * (size_t)bank->offset_count);
    put_u32(&w, (uint32_t)forest->feature_count);
    put_u32(&w, (uint32_t)forest->class_count);
    put_u32(&w, (uint32_t)forest->tree_count);
    for (int a = 0; a < 3; a++)
        put_f64(&w, forest->training_spacing[a]);
    put_u64(&w, (uint64_t)forest->training_samples);
    put_u64(&w, forest->seed);
    put_f64(&w, forest->oob_accuracy);
    put_u32(&w, forest->importances != NULL);
    if (forest->importances)
        put(&w, forest->importances, sizeof(float) * (size_t)forest->feature_count);
    for (int t = 0; t < forest->tree_count; t++) {
        const int64_t nodes = forest->tree_node_start[t + 1] - forest->tree_node_start[t];
        const int64_t leaves = forest->tree_leaf_start[t + 1] - forest->tree_leaf_start[t];
        put_u32(&w, (uint32_t)nodes);
        put_u32(&w, (uint32_t)leaves);
        for (int64_t n = 0; n < nodes; n++) {
            const vl_forest_node *node = &forest->nodes[forest->tree_node_start[t] + n];
            put(&w, &node->feature, 4);
            put(&w, &node->threshold, 4);
            put(&w, &node->left, 4);
            put(&w, &node->right, 4);
        }
        put(&w, forest->leaf_values + forest->tree_leaf_start[t] * forest->class_count,
            sizeof(float) * (size_t)(leaves * forest->class_count));
    }
    put(&w, end_magic, 4);
    status = w.failed ? vl_fail(VL_ERR_OUTPUT, "%s: cannot write: %s", path, strerror(errno)) : VL_OK;
    return vl_atomic_file_close_stream(&file, out, status);
}

typedef struct reader {
    const unsigned char *data;
    size_t size, at;
    int short_read;
} reader;

static void get(reader *r, void *out, size_t bytes)
{
    if (r->short_read || bytes > r->size - r->at) {
        r->short_read = 1;
        memset(out, 0, bytes);
        return;
    }
    memcpy(out, r->data + r->at, bytes);
    r->at += bytes;
}
static uint32_t get_u32(reader *r) { uint32_t v; get(r, &v, 4); return v; }
static uint64_t get_u64(reader *r) { uint64_t v; get(r, &v, 8); return v; }
static double get_f64(reader *r) { double v; get(r, &v, 8); return v; }
static size_t left_bytes(const reader *r) { return r->short_read ? 0 : r->size - r->at; }

static vl_status parse(const char *path, reader *r, vl_forest *forest)
{
    char head[4];
    get(r, head, 4);
    if (r->short_read || memcmp(head, magic, 4) != 0)
        return vl_fail(VL_ERR_INPUT, "%s: not a voxlabel forest model (.vlrf)", path);
    const uint32_t version = get_u32(r);
    if (version == 1)
        return vl_fail(VL_ERR_INPUT,
                       "%s: model format version 1 was trained on the float64 filter bank of earlier voxlabel "
                       "releases; this voxlabel computes the features in float32 (format %d): train the model again "
                       "(voxlabel train), or export it again with scripts/forest_from_sklearn.py",
                       path, VL_FOREST_FORMAT_VERSION);
    if (version != VL_FOREST_FORMAT_VERSION)
        return vl_fail(VL_ERR_INPUT, "%s: model format version %u; this voxlabel reads version %d", path, version,
                       VL_FOREST_FORMAT_VERSION);
    vl_filter_bank *bank = &forest->bank;
    memset(bank, 0, sizeof *bank);
    bank->dims = (int)get_u32(r);
    const uint32_t sigma_count = get_u32(r);
    if (sigma_count < 1 || sigma_count > VL_FILTER_MAX_SIGMAS)
        return vl_fail(VL_ERR_INPUT, "%s: %u sigmas (1..%d)", path, sigma_count, VL_FILTER_MAX_SIGMAS);
    bank->sigma_count = (int)sigma_count;
    for (uint32_t s = 0; s < sigma_count; s++)
        bank->sigmas[s] = get_f64(r);
    for (uint32_t s = 0; s < sigma_count; s++)
        bank->families[s] = get_u32(r);
    bank->truncate = get_f64(r);
    bank->dog_ratio = get_f64(r);
    bank->st_inner_ratio = get_f64(r);
    const uint32_t offsets = get_u32(r);
    if (offsets > VL_FILTER_MAX_OFFSETS)
        return vl_fail(VL_ERR_INPUT, "%s: %u offset features (0..%d)", path, offsets, VL_FILTER_MAX_OFFSETS);
    bank->offset_count = (int)offsets;
    get(r, bank->offsets, sizeof(int32_t) * 6 * offsets);
    if (r->short_read)
        return vl_fail(VL_ERR_INPUT, "%s: truncated in the filter bank", path);
    if (vl_filter_bank_check(bank) != VL_OK)
        return vl_fail(VL_ERR_INPUT, "%s: %s", path, vl_last_error());
    forest->feature_count = (int)get_u32(r);
    forest->class_count = (int)get_u32(r);
    forest->tree_count = (int)get_u32(r);
    if (forest->feature_count != vl_filter_bank_channels(bank))
        return vl_fail(VL_ERR_INPUT, "%s: the model uses %d features but its filter bank makes %d", path,
                       forest->feature_count, vl_filter_bank_channels(bank));
    if (forest->class_count < 1 || forest->class_count > VL_FOREST_MAX_CLASSES || forest->tree_count < 1 ||
        forest->tree_count > 100000)
        return vl_fail(VL_ERR_INPUT, "%s: %d classes and %d trees are out of range", path, forest->class_count,
                       forest->tree_count);
    for (int a = 0; a < 3; a++)
        forest->training_spacing[a] = get_f64(r);
    forest->training_samples = (int64_t)get_u64(r);
    forest->seed = get_u64(r);
    forest->oob_accuracy = get_f64(r);
    const uint32_t has_importances = get_u32(r);
    const int F = forest->feature_count, C = forest->class_count, T = forest->tree_count;
    if (has_importances) {
        if (left_bytes(r) < sizeof(float) * (size_t)F)
            return vl_fail(VL_ERR_INPUT, "%s: truncated in the importances", path);
        if (!(forest->importances = malloc(sizeof(float) * (size_t)F)))
            return vl_fail(VL_ERR_MEMORY, "%s: out of memory", path);
        get(r, forest->importances, sizeof(float) * (size_t)F);
    }
    /* first pass: the trees' sizes, each checked against the bytes that must follow */
    const size_t trees_at = r->at;
    int64_t nodes = 0, leaves = 0;
    for (int t = 0; t < T; t++) {
        const uint32_t n = get_u32(r), l = get_u32(r);
        const uint64_t bytes = (uint64_t)n * 16 + (uint64_t)l * 4 * (uint64_t)C;
        if (r->short_read || n < 1 || l < 1 || l > n || bytes > left_bytes(r))
            return vl_fail(VL_ERR_INPUT, "%s: tree %d claims %u nodes and %u leaves that the file does not hold",
                           path, t, n, l);
        r->at += (size_t)bytes;
        nodes += n;
        leaves += l;
    }
    get(r, head, 4);
    if (r->short_read || memcmp(head, end_magic, 4) != 0 || left_bytes(r) != 0)
        return vl_fail(VL_ERR_INPUT, "%s: the model does not end where its trees do (corrupt or truncated)", path);
    forest->tree_node_start = malloc(sizeof(int64_t) * (size_t)(T + 1));
    forest->tree_leaf_start = malloc(sizeof(int64_t) * (size_t)(T + 1));
    forest->nodes = malloc(sizeof(vl_forest_node) * (size_t)nodes);
    forest->leaf_values = malloc(sizeof(float) * (size_t)(leaves * C));
    if (!forest->tree_node_start || !forest->tree_leaf_start || !forest->nodes || !forest->leaf_values)
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory for %lld nodes", path, (long long)nodes);
    r->at = trees_at;
    nodes = leaves = 0;
    for (int t = 0; t < T; t++) {
        const uint32_t n = get_u32(r), l = get_u32(r);
        forest->tree_node_start[t] = nodes;
        forest->tree_leaf_start[t] = leaves;
        for (uint32_t k = 0; k < n; k++) {
            vl_forest_node *node = &forest->nodes[nodes + k];
            get(r, &node->feature, 4);
            get(r, &node->threshold, 4);
            get(r, &node->left, 4);
            get(r, &node->right, 4);
            /* children come after their parent, so every walk ends at a leaf */
            const int ok = node->feature < 0 ? node->feature == -1 && node->left >= 0 && (uint32_t)node->left < l
                                             : node->feature < F && node->left > (int32_t)k &&
                                                   (uint32_t)node->left < n && node->right > (int32_t)k &&
                                                   (uint32_t)node->right < n && node->threshold == node->threshold;
            if (!ok)
                return vl_fail(VL_ERR_INPUT, "%s: node %u of tree %d is malformed", path, k, t);
        }
        get(r, forest->leaf_values + leaves * C, sizeof(float) * (size_t)l * (size_t)C);
        nodes += n;
        leaves += l;
    }
    forest->tree_node_start[T] = nodes;
    forest->tree_leaf_start[T] = leaves;
    return VL_OK;
}

vl_status vl_forest_load(const char *path, vl_forest *forest)
{
    memset(forest, 0, sizeof *forest);
    FILE *in = fopen(path, "rb");
    if (!in)
        return vl_fail(VL_ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(in), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > ((int64_t)1 << 34)) {
        fclose(in);
        return vl_fail(VL_ERR_INPUT, "%s: not a regular file of a plausible size", path);
    }
    unsigned char *data = malloc((size_t)st.st_size + 1);
    if (!data) {
        fclose(in);
        return vl_fail(VL_ERR_MEMORY, "%s: cannot hold %lld bytes", path, (long long)st.st_size);
    }
    const size_t got = fread(data, 1, (size_t)st.st_size, in);
    fclose(in);
    if (got != (size_t)st.st_size) {
        free(data);
        return vl_fail(VL_ERR_INPUT, "%s: short read", path);
    }
    reader r = {data, got, 0, 0};
    const vl_status status = parse(path, &r, forest);
    free(data);
    if (status != VL_OK)
        vl_forest_free(forest);
    return status;
}
