#include <stdio.h>

#include "voxlabel/atomic_file.h"
#include "cli.h"
#include "label_summary.h"
#include "voxlabel/voxlabel.h"
#include "voxlabel/error.h"

static void write_vector(FILE *out, const double *values, int count)
{
    fputc('[', out);
    for (int i = 0; i < count; i++) {
        if (i)
            fputs(", ", out);
        cli_json_write_number(out, values[i]);
    }
    fputc(']', out);
}

static void write_body(FILE *out, const label_summary *s)
{
    const vl_volume *volume = &s->input->volume;
    const vl_label_result *result = s->result;
    fprintf(out, "{\n  \"voxlabel_version\": ");
    cli_json_write_string(out, vl_version());
    fprintf(out, ",\n  \"input\": {\"path\": ");
    cli_json_write_string(out, s->input_path);
    fprintf(out, ", \"kind\": ");
    cli_json_write_string(out, s->input->kind);
    if (s->input->has_report) {
        fprintf(out, ", \"series_uid\": ");
        cli_json_write_string(out, s->input->report.series_uid);
        fprintf(out, ", \"series_description\": ");
        cli_json_write_string(out, s->input->report.series_description);
        fprintf(out, ", \"transfer_syntax\": ");
        cli_json_write_string(out, s->input->report.transfer_syntax);
    }
    fprintf(out, ", \"dtype\": \"%s\"},\n", vl_dtype_name(volume->dtype));
    fprintf(out, "  \"geometry\": {\"size\": [%lld, %lld, %lld], \"spacing_mm\": ", (long long)volume->nx,
            (long long)volume->ny, (long long)volume->nz);
    write_vector(out, volume->geometry.spacing, 3);
    fprintf(out, ", \"deskewed_from_shear_degrees\": ");
    cli_json_write_number(out, s->deskewed_degrees);
    fprintf(out, ", \"origin_lps_mm\": ");
    write_vector(out, volume->geometry.origin, 3);
    fprintf(out, ", \"direction\": ");
    write_vector(out, volume->geometry.direction, 9);
    fprintf(out, ", \"voxel_volume_mm3\": ");
    cli_json_write_number(out, vl_geometry_voxel_volume(&volume->geometry));
    fprintf(out, "},\n  \"threshold\": {\"source\": ");
    cli_json_write_string(out, s->threshold_source);
    fprintf(out, ", \"lo_hu\": ");
    cli_json_write_number(out, s->lo);
    fprintf(out, ", \"hi_hu\": ");
    cli_json_write_number(out, s->hi);
    fprintf(out, "},\n  \"connectivity\": %d,\n  \"order\": \"%s\",\n", s->options->connectivity,
            vl_label_order_name(s->options->order));
    const int per_slice = s->options->connectivity == 4 || s->options->connectivity == 8;
    fprintf(out,
            "  \"morphology\": {\"open_radius\": %lld, \"close_radius\": %lld, \"structuring_element\": \"ball\", "
            "\"per_slice\": %s},\n",
            (long long)s->open_radius, (long long)s->close_radius, per_slice ? "true" : "false");
    fprintf(out, "  \"filters\": {\"min_size\": %lld, \"largest\": %lld, \"components_before\": %u},\n",
            (long long)s->min_size, (long long)s->largest, s->labelled_count);
    fprintf(out, "  \"components\": %u,\n  \"foreground_voxels\": ", result->count);
    unsigned long long foreground = 0;
    for (uint32_t k = 0; k < result->count; k++)
        foreground += result->sizes[k];
    fprintf(out, "%llu,\n  \"labels_file\": ", foreground);
    cli_json_write_string(out, s->labels_file);
    fprintf(out, ",\n  \"device\": ");
    cli_json_write_device(out, s->options->device.kind, result);
    fprintf(out, ",\n");
    if (s->timings) {
        fprintf(out, "  \"timings_s\": ");
        label_timings_write_json(out, s->timings);
        fprintf(out, ",\n");
    }
    if (s->options_hash) {
        fprintf(out, "  \"options_hash\": ");
        cli_json_write_string(out, s->options_hash);
        fprintf(out, ",\n");
    }
    fprintf(out, "  \"warnings\": [");
    if (s->input->has_report)
        for (size_t w = 0; w < s->input->report.warning_count; w++) {
            if (w)
                fputs(", ", out);
            cli_json_write_string(out, s->input->report.warnings[w]);
        }
    fprintf(out, "]\n}\n");
}

void label_timings_write_json(FILE *out, const label_timings *t)
{
    fprintf(out,
            "{\"read\": %.6f, \"threshold\": %.6f, \"label\": %.6f, \"filter\": %.6f, \"stats\": %.6f, "
            "\"write\": %.6f, \"total\": %.6f}",
            t->read, t->threshold, t->label, t->filter, t->stats, t->write, t->total);
}

vl_status label_summary_write_json(const char *path, const label_summary *summary)
{
    vl_atomic_file file;
    FILE *out;
    vl_status status = vl_atomic_file_open_stream(&file, path, 1, "w", &out);
    if (status != VL_OK)
        return status;
    write_body(out, summary);
    return vl_atomic_file_close_stream(&file, out, VL_OK);
}
