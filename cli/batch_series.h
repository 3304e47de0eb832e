/* voxlabel batch: the cohort's series, as discovery found them, each with its stable output folder, the
 * reason it is skipped (if it is) and the shard that owns it. */
#ifndef VL_BATCH_SERIES_H
#define VL_BATCH_SERIES_H

#include <stddef.h>
#include <stdint.h>

#include "voxlabel/dicom.h"

typedef struct batch_series {
    const vl_dicom_series_info *info; /* in the scan */
    char folder[512];                 /* PATIENT/STUDY/SERIES, each part filename-safe, unique in the cohort */
    char skip_reason[256];            /* "" when the series is labelled */
    char source[4096];                /* the deepest folder that holds all its files, for summary.json */
} batch_series;

typedef struct batch_series_list {
    batch_series *items;              /* sorted by folder */
    size_t count;
} batch_series_list;

/* Builds the list from a scan: names, skip reasons (not CT, localizer, secondary capture or derived, colour,
 * fewer than `min_slices` slices), sorted by folder. VL_ERR_MEMORY on allocation failure. */
vl_status batch_series_list_build(const vl_dicom_scan *scan, int64_t min_slices, batch_series_list *list);
void batch_series_list_free(batch_series_list *list);

/* Whether series `index` (in folder order) belongs to shard `shard` (1-based) of `shards`: round robin,
 * so every shard computes the same split from the same ROOT. */
int batch_series_in_shard(size_t index, int shard, int shards);

/* `text` made a safe single path component: [A-Za-z0-9._-] kept, other bytes '_', at most 64 bytes, never
 * starting with '.'; when anything had to change (or `text` is empty) "-" and 8 hex digits of a hash of the
 * original follow, so different IDs stay different folders. */
void batch_safe_name(const char *text, const char *when_empty, char *out, size_t size);

/* 64-bit FNV-1a, continued from `hash` (start with BATCH_HASH_START). */
#define BATCH_HASH_START 1469598103934665603ULL
uint64_t batch_hash_bytes(uint64_t hash, const void *data, size_t bytes);

#endif
