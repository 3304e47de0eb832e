#define _GNU_SOURCE /* open_memstream, getline */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "batch_cohort.h"
#include "cli.h"
#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"

static const char header[] =
    "folder,status,reason,patient_id,study_uid,series_uid,series_number,description,modality,files,nx,ny,nz,"
    "spacing_x_mm,spacing_y_mm,spacing_z_mm,components,foreground_voxels,foreground_ml,largest_1_ml,"
    "largest_2_ml,largest_3_ml,largest_4_ml,largest_5_ml,warnings,options_hash,device";

/* A CSV field on one line: quoted when it holds a comma, quote or space at an end; control bytes become spaces
 * and bytes outside well-formed UTF-8 become '?', so every reader (pandas, Excel, R) takes the file as UTF-8. */
static void write_field(FILE *out, const char *text)
{
    const size_t length = strlen(text);
    const int quote = strpbrk(text, ",\"") || (length && (text[0] == ' ' || text[length - 1] == ' '));
    if (quote)
        fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)text; *c;) {
        int n = *c < 0x80 ? 1 : *c >= 0xc2 && *c <= 0xdf ? 2 : *c >= 0xe0 && *c <= 0xef ? 3 : *c >= 0xf0 && *c <= 0xf4 ? 4 : 0;
        for (int i = 1; i < n; i++)
            if ((c[i] & 0xc0) != 0x80)
                n = 0;
        if (n == 0) {
            fputc('?', out);
            c++;
        } else if (*c < 0x20 || *c == 0x7f) {
            fputc(' ', out);
            c++;
        } else {
            if (*c == '"')
                fputc('"', out);
            fwrite(c, 1, (size_t)n, out);
            c += n;
        }
    }
    if (quote)
        fputc('"', out);
}

static void write_number(FILE *out, double value)
{
    if (isfinite(value))
        fprintf(out, ",%.9g", value);
    else
        fputc(',', out);
}

static void write_row(FILE *out, const batch_row *row)
{
    const vl_dicom_series_info *info = row->series->info;
    const char *texts[] = {row->series->folder, row->status,       row->reason ? row->reason : "",
                           info->patient_id,    info->study_uid,   info->series_uid};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (i)
            fputc(',', out);
        write_field(out, texts[i]);
    }
    fprintf(out, ",%ld,", info->series_number);
    write_field(out, info->description);
    fputc(',', out);
    write_field(out, info->modality);
    fprintf(out, ",%lld", (long long)info->file_count);
    if (row->has_size)
        fprintf(out, ",%lld,%lld,%lld", (long long)row->size[0], (long long)row->size[1], (long long)row->size[2]);
    else
        fprintf(out, ",%d,%d,%lld", info->columns, info->rows, (long long)info->slice_count);
    for (int i = 0; i < 3; i++)
        write_number(out, row->has_size ? row->spacing[i] : info->spacing[i]);
    if (row->has_result) {
        fprintf(out, ",%u,%llu", row->components, (unsigned long long)row->foreground_voxels);
        write_number(out, row->foreground_ml);
    } else {
        fputs(",,,", out);
    }
    for (int i = 0; i < 5; i++)
        write_number(out, row->has_result && i < row->largest_count ? row->largest_ml[i] : NAN);
    fputc(',', out);
    write_field(out, row->warnings ? row->warnings : "");
    fputc(',', out);
    write_field(out, row->options_hash ? row->options_hash : "");
    fputc(',', out);
    write_field(out, row->device ? row->device : "");
}

static vl_status write_text_file(const char *path, const char *text)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    fputs(text, out);
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}

vl_status batch_row_record(const char *series_directory, const batch_row *row, const label_timings *timings)
{
    char path[VL_PATH_MAX];
    if (snprintf(path, sizeof path, "%s/timings.json", series_directory) >= (int)sizeof path)
        return vl_fail(VL_ERR_OUTPUT, "%s: path too long", series_directory);
    vl_atomic_file file;
    FILE *timings_out;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &timings_out);
    if (status != VL_OK)
        return status;
    label_timings_write_json(timings_out, timings);
    fputc('\n', timings_out);
    if ((status = vl_atomic_file_close_stream(&file, timings_out, VL_OK)) != VL_OK)
        return status;
    char *line = NULL;
    size_t bytes = 0;
    FILE *out = open_memstream(&line, &bytes);
    if (!out)
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory", series_directory);
    fprintf(out, "%s\n", header);
    write_row(out, row);
    fputc('\n', out);
    fclose(out);
    snprintf(path, sizeof path, "%s/series.csv", series_directory);
    status = write_text_file(path, line);
    free(line);
    return status;
}

/* Line 2 of SERIES/series.csv (without its newline), or NULL. */
static char *read_row_line(const char *series_directory)
{
    char path[VL_PATH_MAX];
    snprintf(path, sizeof path, "%s/series.csv", series_directory);
    FILE *in = fopen(path, "r");
    if (!in)
        return NULL;
    char *line = NULL;
    size_t capacity = 0;
    ssize_t length = -1;
    for (int n = 0; n < 2; n++)
        length = getline(&line, &capacity, in);
    fclose(in);
    if (length <= 0 || line[length - 1] != '\n') {
        free(line);
        return NULL;
    }
    line[length - 1] = '\0';
    return line;
}

/* Field `index` (0-based) of a row line; fields before it are unquoted or quoted without newlines. */
static void row_field(const char *line, int index, char *out, size_t size)
{
    const char *c = line;
    for (int field = 0; field <= index; field++) {
        size_t length = 0;
        if (*c == '"') {
            for (c++; *c && !(c[0] == '"' && c[1] != '"'); c++) {
                if (*c == '"')
                    c++;
                if (length + 1 < size)
                    out[length++] = *c;
            }
            if (*c == '"')
                c++;
        } else {
            for (; *c && *c != ','; c++)
                if (length + 1 < size)
                    out[length++] = *c;
        }
        out[length] = '\0';
        if (*c == ',')
            c++;
    }
}

static int file_exists(const char *directory, const char *name)
{
    char path[VL_PATH_MAX];
    struct stat info;
    snprintf(path, sizeof path, "%s/%s", directory, name);
    return stat(path, &info) == 0 && S_ISREG(info.st_mode);
}

enum { column_status = 1, column_options_hash = 25 };

int batch_series_complete(const char *series_directory, const char *options_hash, const char *labels_file)
{
    char *line = read_row_line(series_directory);
    if (!line)
        return 0;
    char status[32], hash[64];
    row_field(line, column_status, status, sizeof status);
    row_field(line, column_options_hash, hash, sizeof hash);
    free(line);
    if (strcmp(status, "done") != 0)
        return 0;
    if (strcmp(hash, options_hash) != 0)
        return -1;
    return file_exists(series_directory, labels_file) && file_exists(series_directory, "components.csv") &&
           file_exists(series_directory, "summary.json");
}

static double recorded_seconds(const char *series_directory)
{
    char path[VL_PATH_MAX], text[512] = "";
    if (snprintf(path, sizeof path, "%s/timings.json", series_directory) >= (int)sizeof path)
        return NAN;
    FILE *in = fopen(path, "r");
    if (!in)
        return NAN;
    size_t got = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[got] = '\0';
    const char *total = strstr(text, "\"total\": ");
    return total ? strtod(total + 9, NULL) : NAN;
}

vl_status batch_cohort_write(const char *path, const char *out_directory, const batch_series_list *list, int shard,
                             int shards, const char *options_hash, int *failed_count)
{
    char *text = NULL;
    size_t bytes = 0;
    FILE *out = open_memstream(&text, &bytes);
    if (!out)
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory", path);
    fprintf(out, "%s,seconds\n", header);
    *failed_count = 0;
    for (size_t s = 0; s < list->count; s++) {
        if (!batch_series_in_shard(s, shard, shards))
            continue;
        const batch_series *series = &list->items[s];
        char directory[VL_PATH_MAX];
        snprintf(directory, sizeof directory, "%s/%s", out_directory, series->folder);
        char *line = series->skip_reason[0] ? NULL : read_row_line(directory);
        if (line) {
            char status[32];
            row_field(line, column_status, status, sizeof status);
            *failed_count += strcmp(status, "done") != 0;
            fputs(line, out);
            write_number(out, recorded_seconds(directory));
            fputc('\n', out);
            free(line);
            continue;
        }
        batch_row row = {.series = series, .options_hash = options_hash};
        if (series->skip_reason[0]) {
            row.status = "skipped";
            row.reason = series->skip_reason;
        } else {
            row.status = "failed";
            row.reason = "not finished: the run was stopped before this series (run again to resume)";
            ++*failed_count;
        }
        write_row(out, &row);
        fputs(",\n", out);
    }
    if (fclose(out) != 0) {
        free(text);
        return vl_fail(VL_ERR_MEMORY, "%s: out of memory", path);
    }
    vl_status status = write_text_file(path, text);
    free(text);
    return status;
}

static int by_text(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

vl_status batch_cohort_merge(const char *path, const char *const *directories, int count)
{
    char **rows = NULL;
    size_t row_count = 0, row_capacity = 0;
    int shards = 0;
    char seen[1024] = {0}; /* seen[i]: shard i+1 found */
    vl_status status = VL_OK;
    for (int d = 0; d < count && status == VL_OK; d++) {
        DIR *dir = opendir(directories[d]);
        if (!dir) {
            status = vl_fail(VL_ERR_INPUT, "%s: cannot open the directory: %s", directories[d], strerror(errno));
            break;
        }
        struct dirent *entry;
        while (status == VL_OK && (entry = readdir(dir))) {
            int shard, of, consumed = 0;
            if (sscanf(entry->d_name, "cohort-shard-%d-of-%d.csv%n", &shard, &of, &consumed) != 2 ||
                entry->d_name[consumed] != '\0')
                continue;
            if (of < 1 || of > (int)sizeof seen || shard < 1 || shard > of) {
                status = vl_fail(VL_ERR_INPUT, "%s/%s: not a shard name voxlabel writes", directories[d], entry->d_name);
                break;
            }
            if (shards && of != shards) {
                status = vl_fail(VL_ERR_INPUT, "%s/%s: shards of %d and of %d runs mixed", directories[d],
                                 entry->d_name, shards, of);
                break;
            }
            shards = of;
            if (seen[shard - 1]) {
                status = vl_fail(VL_ERR_INPUT, "%s/%s: shard %d of %d found twice", directories[d], entry->d_name,
                                 shard, of);
                break;
            }
            seen[shard - 1] = 1;
            char file[VL_PATH_MAX];
            snprintf(file, sizeof file, "%s/%s", directories[d], entry->d_name);
            FILE *in = fopen(file, "r");
            if (!in) {
                status = vl_fail(VL_ERR_INPUT, "%s: cannot read: %s", file, strerror(errno));
                break;
            }
            char *line = NULL;
            size_t capacity = 0;
            ssize_t length;
            for (int number = 0; status == VL_OK && (length = getline(&line, &capacity, in)) > 0; number++) {
                if (line[length - 1] == '\n')
                    line[length - 1] = '\0';
                if (number == 0) {
                    if (strncmp(line, header, sizeof header - 1) != 0)
                        status = vl_fail(VL_ERR_INPUT, "%s: not a voxlabel batch table (other columns)", file);
                    continue;
                }
                if (row_count == row_capacity) {
                    row_capacity = row_capacity ? 2 * row_capacity : 256;
                    char **grown = realloc(rows, row_capacity * sizeof *rows);
                    if (!grown) {
                        status = vl_fail(VL_ERR_MEMORY, "%s: out of memory", file);
                        break;
                    }
                    rows = grown;
                }
                if (!(rows[row_count] = strdup(line))) {
                    status = vl_fail(VL_ERR_MEMORY, "%s: out of memory", file);
                    break;
                }
                row_count++;
            }
            free(line);
            fclose(in);
        }
        closedir(dir);
    }
    if (status == VL_OK && !shards)
        status = vl_fail(VL_ERR_INPUT, "%s: no cohort-shard-I-of-N.csv here (run voxlabel batch --shard I/N first)",
                         directories[0]);
    for (int s = 0; status == VL_OK && s < shards; s++)
        if (!seen[s])
            status = vl_fail(VL_ERR_INPUT, "shard %d of %d is missing (cohort-shard-%d-of-%d.csv in none of the "
                             "directories given)", s + 1, shards, s + 1, shards);
    /* One cohort, one set of options: a shard run with other ones would make the table a mix. */
    char first_hash[64] = "", hash[64];
    for (size_t r = 0; status == VL_OK && r < row_count; r++) {
        row_field(rows[r], column_options_hash, r ? hash : first_hash, sizeof hash);
        if (r && strcmp(hash, first_hash) != 0)
            status = vl_fail(VL_ERR_INPUT, "the shards were made with other label options (options_hash %s and %s); "
                             "run the odd ones again with the same options", first_hash, hash);
    }
    if (status == VL_OK) {
        qsort(rows, row_count, sizeof *rows, by_text);
        char *text = NULL;
        size_t bytes = 0;
        FILE *out = open_memstream(&text, &bytes);
        if (!out) {
            status = vl_fail(VL_ERR_MEMORY, "%s: out of memory", path);
        } else {
            fprintf(out, "%s,seconds\n", header);
            for (size_t r = 0; r < row_count; r++)
                fprintf(out, "%s\n", rows[r]);
            fclose(out);
            status = write_text_file(path, text);
            free(text);
        }
    }
    for (size_t r = 0; r < row_count; r++)
        free(rows[r]);
    free(rows);
    return status;
}
