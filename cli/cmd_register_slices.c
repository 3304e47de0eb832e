/* voxlabel register-slices: for every slice of A, the slice of B that matches it best and the in-plane
 * transform between them, from SIFT matches and RANSAC. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_outputs.h"
#include "features_cli.h"

static const char register_help[] =
    "usage: voxlabel register-slices A B [-o DIR] [options]\n"
    "\n"
    "For every slice of A, finds the slice of B with the most RANSAC-consistent SIFT matches among the\n"
    "candidates and reports the in-plane transform A -> B (pixels). A and B are two CT series or volumes\n"
    "(pre/post contrast, follow-ups) or images. Candidates are the --search slices either side of the B\n"
    "slice nearest in patient position (LPS, along B's slice normal) to A's slice centre; volumes without\n"
    "geometry are paired by index. Ties go to the slice nearer that position.\n"
    "\n"
    "output: CSV on stdout, or with -o DIR the files registration.csv and registration.json:\n"
    "  slice_a,slice_b,expected_b,position_a_mm,position_b_mm,matches,inliers,found,m00,m01,m02,m10,m11,m12,\n"
    "  rotation_deg,scale,shift_x_px,shift_y_px,residual_px     (slice_b -1 and found 0: no match)\n"
    "\n"
    "options:\n"
    "  -o, --output DIR       write registration.csv and registration.json there\n"
    "  --search K|all         candidates: K slices either side of the expected one (default 5), or all\n"
    "%s%s%s"
    "\n"
    "examples:\n"
    "  voxlabel register-slices pre_ct/ post_ct/ --window 40:400 > pairs.csv\n"
    "  voxlabel register-slices followup1/ followup2/ -o reg/ --search all --device gpu\n";

/* Position of slice z's centre along `onto`'s slice axis, in slice indices of `onto`. */
static double index_along(const vl_volume *from, int64_t z, const vl_volume *onto)
{
    double p[3], origin[3];
    vl_geometry_index_to_lps(&from->geometry, (from->nx - 1) / 2.0, (from->ny - 1) / 2.0, (double)z, p);
    vl_geometry_index_to_lps(&onto->geometry, 0, 0, 0, origin);
    const double *d = onto->geometry.direction;
    double normal[3] = {d[3] * d[7] - d[6] * d[4], d[6] * d[1] - d[0] * d[7], d[0] * d[4] - d[3] * d[1]};
    double step[3] = {d[2] * onto->geometry.spacing[2], d[5] * onto->geometry.spacing[2],
                      d[8] * onto->geometry.spacing[2]};
    double along = 0, per_slice = 0;
    for (int c = 0; c < 3; c++) {
        along += (p[c] - origin[c]) * normal[c];
        per_slice += step[c] * normal[c];
    }
    return fabs(per_slice) > 1e-9 ? along / per_slice : (double)z;
}

static double position_mm(const vl_volume *volume, int64_t z)
{
    double p[3];
    vl_geometry_index_to_lps(&volume->geometry, (volume->nx - 1) / 2.0, (volume->ny - 1) / 2.0, (double)z, p);
    const double *d = volume->geometry.direction;
    double normal[3] = {d[3] * d[7] - d[6] * d[4], d[6] * d[1] - d[0] * d[7], d[0] * d[4] - d[3] * d[1]};
    return p[0] * normal[0] + p[1] * normal[1] + p[2] * normal[2];
}

static int write_table(FILE *csv, FILE *json, const vl_slice_pair *pairs, const int64_t *expected,
                       const vl_volume *a, const vl_volume *b)
{
    int ok = fprintf(csv, "slice_a,slice_b,expected_b,position_a_mm,position_b_mm,matches,inliers,found,m00,m01,m02,"
                          "m10,m11,m12,rotation_deg,scale,shift_x_px,shift_y_px,residual_px\n") > 0;
    if (json)
        ok &= fprintf(json, "{\"pairs\": [") > 0;
    for (int64_t z = 0; ok && z < a->nz; z++) {
        const vl_slice_pair *s = &pairs[z];
        const double *m = s->matrix;
        double pa = position_mm(a, z), pb = s->slice_b >= 0 ? position_mm(b, s->slice_b) : NAN;
        ok &= fprintf(csv, "%lld,%lld,%lld,%.3f,%.3f,%lld,%lld,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6f,%.6f,%.4f,%.4f,%.4f\n",
                      (long long)z, (long long)s->slice_b, (long long)expected[z], pa, pb, (long long)s->matches,
                      (long long)s->inliers, s->found, m[0] + 0.0, m[1] + 0.0, m[2] + 0.0, m[3] + 0.0, m[4] + 0.0, m[5] + 0.0, s->rotation_deg + 0.0, s->scale,
                      m[2], m[5], s->residual_rms) > 0;
        if (json)
            ok &= fprintf(json,
                          "%s\n  {\"slice_a\": %lld, \"slice_b\": %lld, \"expected_b\": %lld, \"matches\": %lld, "
                          "\"inliers\": %lld, \"found\": %s, \"matrix\": [[%.9g, %.9g, %.9g], [%.9g, %.9g, %.9g]], "
                          "\"rotation_deg\": %.6f, \"scale\": %.6f, \"residual_px\": %.4f}",
                          z ? "," : "", (long long)z, (long long)s->slice_b, (long long)expected[z],
                          (long long)s->matches, (long long)s->inliers, s->found ? "true" : "false", m[0], m[1], m[2],
                          m[3], m[4], m[5], s->rotation_deg + 0.0, s->scale, s->residual_rms) > 0;
    }
    if (json)
        ok &= fprintf(json, "\n]}\n") > 0;
    return ok;
}

int cmd_register_slices(int argc, char **argv)
{
    features_cli_options options;
    features_cli_options_default(&options);
    features_match_options match;
    features_match_options_default(&match);
    const char *paths[2] = {NULL, NULL}, *output = NULL;
    int64_t search = 5;
    int code;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(register_help, features_cli_match_help, features_cli_help, cli_input_help);
            return CLI_EXIT_OK;
        }
        const int taken = features_cli_parse_pair_argument(argc, argv, &i, paths, &options, &match);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        if (strcmp(option, "-o") && strcmp(option, "--output") && strcmp(option, "--search"))
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel register-slices --help')", option);
        const char *value = cli_option_value(argc, argv, &i);
        if (!value)
            return CLI_EXIT_USAGE;
        if (strcmp(option, "--search") == 0) {
            if (strcmp(value, "all") == 0)
                search = INT32_MAX;
            else if (cli_parse_int64(option, value, 0, INT32_MAX, &search))
                return CLI_EXIT_USAGE;
        } else {
            output = value;
        }
    }
    if (!paths[1])
        return cli_error(CLI_EXIT_USAGE, "register-slices: A and B are required (see 'voxlabel register-slices --help')");
    cli_progress_configure(options.progress, options.quiet);
    cli_outputs outputs;
    const char *names[] = {"registration.csv", "registration.json"};
    if (output && (code = cli_outputs_prepare(&outputs, output, names, 2, options.force)))
        return code;
    features_input inputs[2];
    features_cli_options per_input[2];
    if ((code = features_cli_load_pair(paths, &options, per_input, inputs))) {
        if (output)
            cli_outputs_abort(&outputs);
        return code;
    }
    const vl_volume *a = &inputs[0].display, *b = &inputs[1].display;
    vl_sift_features features[2];
    memset(features, 0, sizeof features);
    int64_t *first = calloc((size_t)a->nz, sizeof *first), *last = calloc((size_t)a->nz, sizeof *last);
    int64_t *expected = calloc((size_t)a->nz, sizeof *expected);
    vl_slice_pair *pairs = calloc((size_t)a->nz, sizeof *pairs);
    if (!first || !last || !expected || !pairs)
        code = cli_status_error(vl_fail(VL_ERR_MEMORY, "register-slices: out of memory"));
    for (int64_t z = 0; !code && z < a->nz; z++) {
        double at = index_along(a, z, b);
        int64_t e = (int64_t)floor(at + 0.5);
        e = e < 0 ? 0 : e >= b->nz ? b->nz - 1 : e;
        expected[z] = e;
        first[z] = search >= e ? 0 : e - search;
        last[z] = search >= b->nz - 1 - e ? b->nz - 1 : e + search;
    }
    if (!code)
        code = features_cli_run_sift_pair(inputs, per_input, features);
    if (!code) {
        vl_progress progress = cli_progress();
        vl_status status = vl_register_slices(&features[0], &features[1], first, last, expected, match.ratio,
                                              &match.ransac, &options.device, &progress, pairs);
        if (status != VL_OK)
            code = cli_status_error(status);
    }
    if (!code && output) {
        FILE *csv = fopen(cli_outputs_staged(&outputs, 0), "w"), *json = fopen(cli_outputs_staged(&outputs, 1), "w");
        int ok = csv && json && write_table(csv, json, pairs, expected, a, b);
        ok &= (csv ? fclose(csv) == 0 : 0);
        ok &= (json ? fclose(json) == 0 : 0);
        code = ok ? cli_outputs_commit(&outputs)
                  : cli_error(CLI_EXIT_OUTPUT, "%s: cannot write registration.csv/json", output);
    } else if (!code) {
        if (!write_table(stdout, NULL, pairs, expected, a, b) || fflush(stdout) != 0)
            code = cli_error(CLI_EXIT_OUTPUT, "stdout: write failed");
    }
    if (!code && !options.quiet) {
        int64_t found = 0;
        for (int64_t z = 0; z < a->nz; z++)
            found += pairs[z].found;
        fprintf(output ? stdout : stderr, "%lld of %lld slices of A matched a slice of B%s%s\n", (long long)found,
                (long long)a->nz, output ? " -> " : "", output ? output : "");
    }
    if (code && output)
        cli_outputs_abort(&outputs);
    free(first);
    free(last);
    free(expected);
    free(pairs);
    vl_sift_features_free(&features[0]);
    vl_sift_features_free(&features[1]);
    features_input_free(&inputs[0]);
    features_input_free(&inputs[1]);
    return code;
}
