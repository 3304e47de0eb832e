#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_series.h"
#include "voxlabel/error.h"

uint64_t batch_hash_bytes(uint64_t hash, const void *data, size_t bytes)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= p[i];
        hash *= 1099511628211ULL;
    }
    return hash;
}

void batch_safe_name(const char *text, const char *when_empty, char *out, size_t size)
{
    enum { most = 64 };
    char safe[most + 1];
    size_t length = 0;
    int changed = !text[0];
    for (const char *c = text; *c; c++) {
        if (length == most) {
            changed = 1;
            break;
        }
        const int keep = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                         *c == '-' || *c == '_' || (*c == '.' && length > 0);
        safe[length++] = keep ? *c : '_';
        changed |= !keep;
    }
    safe[length] = '\0';
    /* DICOM pads odd-length values with a space: "ABC " and "ABC" name the same ID. */
    while (length > 0 && safe[length - 1] == '_' && text[length - 1] == ' ')
        safe[--length] = '\0', changed = 1;
    if (!changed) {
        snprintf(out, size, "%s", safe);
        return;
    }
    const uint64_t hash = batch_hash_bytes(BATCH_HASH_START, text, strlen(text));
    snprintf(out, size, "%s-%08x", length ? safe : when_empty, (unsigned)(hash ^ (hash >> 32)));
}

static void skip_reason(const vl_dicom_series_info *info, int64_t min_slices, char *reason, size_t size)
{
    reason[0] = '\0';
    if (info->is_colour)
        snprintf(reason, size, "colour image (%s), not a CT volume", info->photometric[0] ? info->photometric : "RGB");
    else if (info->is_localizer)
        snprintf(reason, size, "localizer (ImageType %s)", info->image_type);
    else if (info->is_derived)
        snprintf(reason, size, "secondary capture or derived image (%s, ImageType %s)", info->sop_class,
                 info->image_type[0] ? info->image_type : "none");
    else if (strcmp(info->modality, "CT") != 0)
        snprintf(reason, size, "modality %s, not CT", info->modality[0] ? info->modality : "missing");
    else if (info->slice_count < min_slices)
        snprintf(reason, size, "%lld slice%s, fewer than --min-slices %lld", (long long)info->slice_count,
                 info->slice_count == 1 ? "" : "s", (long long)min_slices);
}

/* The longest directory prefix common to every file of the series. */
static void common_folder(const vl_dicom_series_info *info, char *out, size_t size)
{
    if (!info->path_count) {
        snprintf(out, size, ".");
        return;
    }
    const char *first = info->paths[0];
    size_t length = strlen(first);
    for (size_t p = 1; p < info->path_count; p++) {
        size_t same = 0;
        while (same < length && info->paths[p][same] == first[same])
            same++;
        length = same;
    }
    while (length > 0 && first[length - 1] != '/')
        length--;
    if (length > 1)
        length--; /* without the trailing '/' */
    if (length >= size)
        length = size - 1;
    if (length == 0)
        snprintf(out, size, ".");
    else
        snprintf(out, size, "%.*s", (int)length, first);
}

static int by_folder(const void *a, const void *b)
{
    return strcmp(((const batch_series *)a)->folder, ((const batch_series *)b)->folder);
}

vl_status batch_series_list_build(const vl_dicom_scan *scan, int64_t min_slices, batch_series_list *list)
{
    list->count = 0;
    list->items = calloc(scan->series_count ? scan->series_count : 1, sizeof *list->items);
    if (!list->items)
        return vl_fail(VL_ERR_MEMORY, "batch: out of memory for %zu series", scan->series_count);
    for (size_t s = 0; s < scan->series_count; s++) {
        const vl_dicom_series_info *info = &scan->series[s];
        batch_series *item = &list->items[list->count++];
        item->info = info;
        char patient[100], study[100], series_text[120], series[100];
        batch_safe_name(info->patient_id, "no-patient-id", patient, sizeof patient);
        batch_safe_name(info->study_uid, "no-study-uid", study, sizeof study);
        if (info->series_number >= 0)
            snprintf(series_text, sizeof series_text, "%ld_%s", info->series_number, info->series_uid);
        else
            snprintf(series_text, sizeof series_text, "%s", info->series_uid);
        batch_safe_name(series_text, "no-series-uid", series, sizeof series);
        snprintf(item->folder, sizeof item->folder, "%s/%s/%s", patient, study, series);
        skip_reason(info, min_slices, item->skip_reason, sizeof item->skip_reason);
        common_folder(info, item->source, sizeof item->source);
    }
    /* One SeriesInstanceUID can hold several stacks (other size or orientation): the scan lists them in a fixed
     * order, and the second and later of one name get _2, _3 ... (the count is over the names before any suffix). */
    for (size_t i = list->count; i-- > 0;) {
        int copies = 1;
        for (size_t j = 0; j < i; j++)
            copies += strcmp(list->items[j].folder, list->items[i].folder) == 0;
        if (copies > 1) {
            size_t length = strlen(list->items[i].folder);
            snprintf(list->items[i].folder + length, sizeof list->items[i].folder - length, "_%d", copies);
        }
    }
    qsort(list->items, list->count, sizeof *list->items, by_folder);
    return VL_OK;
}

void batch_series_list_free(batch_series_list *list)
{
    free(list->items);
    list->items = NULL;
    list->count = 0;
}

int batch_series_in_shard(size_t index, int shard, int shards)
{
    return (int)(index % (size_t)shards) == shard - 1;
}
