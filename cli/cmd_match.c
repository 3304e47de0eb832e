/* voxlabel match: SIFT matches and a RANSAC transform between two images, or slice by slice between two CTs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_outputs.h"
#include "features_cli.h"

static const char match_help[] =
    "usage: voxlabel match A B -o DIR [options]\n"
    "\n"
    "Matches SIFT descriptors of A to those of B (brute force, Lowe's ratio test; on the GPU under\n"
    "--device auto|gpu) and estimates a transform A -> B in pixels per slice pair by seeded RANSAC with a\n"
    "least-squares refit. A and B are images or CTs (see 'voxlabel features --help'); two CTs with the same\n"
    "number of slices are paired slice by slice, or name one pair with --pair ZA:ZB. To find which slice of\n"
    "B matches a slice of A, use 'voxlabel register-slices'.\n"
    "\n"
    "writes into DIR:\n"
    "  matches.csv       slice_a,slice_b,index_a,index_b,ax,ay,bx,by,distance,inlier\n"
    "  transforms.csv    slice_a,slice_b,model,matches,inliers,found,m00,m01,m02,m10,m11,m12,rotation_deg,\n"
    "                    scale,residual_px   (bx = m00 ax + m01 ay + m02, by = m10 ax + m11 ay + m12)\n"
    "  transforms.json   the same rows\n"
    "  matches.png       A and B side by side (the pair with most inliers) with the inlier matches drawn\n"
    "\n"
    "options:\n"
    "  -o, --output DIR       output directory (made when missing)\n"
    "  --pair ZA:ZB           match only slice ZA of A with slice ZB of B\n"
    "%s%s%s"
    "\n"
    "examples:\n"
    "  voxlabel match before.png after.png -o m/\n"
    "  voxlabel match pre_ct/ post_ct/ -o m/ --pair 40:42 --model affine\n";

typedef struct pair_result {
    vl_slice_pair pair;
    vl_feature_match *matches;
    uint8_t *inliers;
} pair_result;

static vl_status write_matches(const char *path, const pair_result *results, int64_t count, const vl_sift_features *a,
                               const vl_sift_features *b)
{
    FILE *file = fopen(path, "w");
    if (!file)
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create", path);
    int ok = fprintf(file, "slice_a,slice_b,index_a,index_b,ax,ay,bx,by,distance,inlier\n") > 0;
    for (int64_t p = 0; ok && p < count; p++) {
        const pair_result *r = &results[p];
        int64_t a0 = a->slice_start[r->pair.slice_a], b0 = b->slice_start[r->pair.slice_b];
        for (int64_t m = 0; ok && m < r->pair.matches; m++) {
            const vl_sift_keypoint *ka = &a->keypoints[a0 + r->matches[m].query];
            const vl_sift_keypoint *kb = &b->keypoints[b0 + r->matches[m].train];
            ok &= fprintf(file, "%lld,%lld,%d,%d,%.4f,%.4f,%.4f,%.4f,%.3f,%d\n", (long long)r->pair.slice_a,
                          (long long)r->pair.slice_b, r->matches[m].query, r->matches[m].train, ka->x, ka->y, kb->x,
                          kb->y, r->matches[m].distance, r->inliers[m]) > 0;
        }
    }
    ok &= fclose(file) == 0;
    return ok ? VL_OK : vl_fail(VL_ERR_OUTPUT, "%s: write failed", path);
}

static vl_status write_transforms(const char *csv_path, const char *json_path, const pair_result *results,
                                  int64_t count, vl_transform_model model)
{
    FILE *csv = fopen(csv_path, "w"), *json = fopen(json_path, "w");
    if (!csv || !json) {
        if (csv)
            fclose(csv);
        if (json)
            fclose(json);
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create", csv ? json_path : csv_path);
    }
    int ok = fprintf(csv, "slice_a,slice_b,model,matches,inliers,found,m00,m01,m02,m10,m11,m12,rotation_deg,scale,"
                          "residual_px\n") > 0;
    ok &= fprintf(json, "{\"model\": \"%s\", \"pairs\": [", features_model_name(model)) > 0;
    for (int64_t p = 0; ok && p < count; p++) {
        const vl_slice_pair *s = &results[p].pair;
        const double *m = s->matrix;
        ok &= fprintf(csv, "%lld,%lld,%s,%lld,%lld,%d,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.6f,%.6f,%.4f\n",
                      (long long)s->slice_a, (long long)s->slice_b, features_model_name(model), (long long)s->matches,
                      (long long)s->inliers, s->found, m[0] + 0.0, m[1] + 0.0, m[2] + 0.0, m[3] + 0.0, m[4] + 0.0, m[5] + 0.0, s->rotation_deg + 0.0, s->scale,
                      s->residual_rms) > 0;
        ok &= fprintf(json,
                      "%s\n  {\"slice_a\": %lld, \"slice_b\": %lld, \"matches\": %lld, \"inliers\": %lld, "
                      "\"found\": %s, \"matrix\": [[%.9g, %.9g, %.9g], [%.9g, %.9g, %.9g]], \"rotation_deg\": %.6f, "
                      "\"scale\": %.6f, \"residual_px\": %.4f}",
                      p ? "," : "", (long long)s->slice_a, (long long)s->slice_b, (long long)s->matches,
                      (long long)s->inliers, s->found ? "true" : "false", m[0] + 0.0, m[1] + 0.0, m[2] + 0.0, m[3] + 0.0, m[4] + 0.0, m[5] + 0.0,
                      s->rotation_deg + 0.0, s->scale, s->residual_rms) > 0;
    }
    ok &= fprintf(json, "\n]}\n") > 0;
    ok &= fclose(csv) == 0;
    ok &= fclose(json) == 0;
    return ok ? VL_OK : vl_fail(VL_ERR_OUTPUT, "%s: write failed", csv_path);
}

/* A and B side by side (B to the right), the inlier matches as lines, their keypoints as circles. */
static vl_status write_side_by_side(const char *path, const features_input *ia, const features_input *ib,
                                    const pair_result *r, const vl_sift_features *a, const vl_sift_features *b)
{
    vl_image left, right, both;
    vl_status status = features_slice_rgb(&ia->display, r->pair.slice_a, &left);
    if (status != VL_OK)
        return status;
    status = features_slice_rgb(&ib->display, r->pair.slice_b, &right);
    if (status != VL_OK) {
        vl_image_free(&left);
        return status;
    }
    int64_t height = left.height > right.height ? left.height : right.height;
    status = vl_image_create(&both, left.width + right.width, height, 3, 8);
    if (status == VL_OK) {
        uint8_t *out = both.data;
        for (int64_t y = 0; y < height; y++) {
            if (y < left.height)
                memcpy(out + 3 * y * both.width, (uint8_t *)left.data + 3 * y * left.width, (size_t)(3 * left.width));
            if (y < right.height)
                memcpy(out + 3 * (y * both.width + left.width), (uint8_t *)right.data + 3 * y * right.width,
                       (size_t)(3 * right.width));
        }
        int64_t a0 = a->slice_start[r->pair.slice_a], b0 = b->slice_start[r->pair.slice_b];
        const uint8_t line[3] = {255, 200, 0}, circle[3] = {40, 255, 80};
        for (int64_t m = 0; m < r->pair.matches; m++) {
            if (!r->inliers[m])
                continue;
            const vl_sift_keypoint *ka = &a->keypoints[a0 + r->matches[m].query];
            const vl_sift_keypoint *kb = &b->keypoints[b0 + r->matches[m].train];
            features_draw_line(&both, ka->x, ka->y, kb->x + (double)left.width, kb->y, line);
            features_draw_keypoint(&both, 0, ka, circle);
            features_draw_keypoint(&both, left.width, kb, circle);
        }
        status = vl_png_write(path, &both, 1);
        vl_image_free(&both);
    }
    vl_image_free(&left);
    vl_image_free(&right);
    return status;
}

int cmd_match(int argc, char **argv)
{
    features_cli_options options;
    features_cli_options_default(&options);
    features_match_options match;
    features_match_options_default(&match);
    const char *paths[2] = {NULL, NULL}, *output = NULL;
    int64_t pair_a = -1, pair_b = -1;
    int code;
    for (int i = 1; i < argc; i++) {
        const char *option = argv[i];
        if (strcmp(option, "--help") == 0 || strcmp(option, "-h") == 0) {
            printf(match_help, features_cli_match_help, features_cli_help, cli_input_help);
            return CLI_EXIT_OK;
        }
        const int taken = features_cli_parse_pair_argument(argc, argv, &i, paths, &options, &match);
        if (taken < 0)
            return -taken;
        if (taken)
            continue;
        if (strcmp(option, "-o") && strcmp(option, "--output") && strcmp(option, "--pair"))
            return cli_error(CLI_EXIT_USAGE, "%s: unknown option (see 'voxlabel match --help')", option);
        const char *value = cli_option_value(argc, argv, &i);
        if (!value)
            return CLI_EXIT_USAGE;
        if (strcmp(option, "--pair") == 0) {
            long long za, zb;
            char tail;
            if (sscanf(value, "%lld:%lld%c", &za, &zb, &tail) != 2 || za < 0 || zb < 0)
                return cli_error(CLI_EXIT_USAGE, "--pair: '%s' is not ZA:ZB with slice numbers from 0", value);
            pair_a = za, pair_b = zb;
        } else {
            output = value;
        }
    }
    if (!paths[1] || !output)
        return cli_error(CLI_EXIT_USAGE, "match: A, B and -o DIR are required (see 'voxlabel match --help')");
    cli_progress_configure(options.progress, options.quiet);
    cli_outputs outputs;
    const char *names[] = {"matches.csv", "transforms.csv", "transforms.json", "matches.png"};
    if ((code = cli_outputs_prepare(&outputs, output, names, 4, options.force)))
        return code;
    features_input inputs[2];
    features_cli_options per_input[2];
    if ((code = features_cli_load_pair(paths, &options, per_input, inputs))) {
        cli_outputs_abort(&outputs);
        return code;
    }
    int64_t na = inputs[0].display.nz, nb = inputs[1].display.nz, count = 0;
    if (pair_a >= 0 && (pair_a >= na || pair_b >= nb))
        code = cli_error(CLI_EXIT_USAGE, "--pair: %lld:%lld is beyond A's %lld or B's %lld slices", (long long)pair_a,
                         (long long)pair_b, (long long)na, (long long)nb);
    else if (pair_a < 0 && na != nb)
        code = cli_error(CLI_EXIT_USAGE,
                         "match: A has %lld slices and B %lld: name one pair with --pair ZA:ZB, or find the "
                         "corresponding slices with 'voxlabel register-slices'",
                         (long long)na, (long long)nb);
    vl_sift_features features[2];
    memset(features, 0, sizeof features);
    pair_result *results = NULL;
    if (!code)
        code = features_cli_run_sift_pair(inputs, per_input, features);
    if (!code) {
        count = pair_a >= 0 ? 1 : na;
        results = calloc((size_t)count, sizeof *results);
        if (!results)
            code = cli_status_error(vl_fail(VL_ERR_MEMORY, "match: out of memory"));
    }
    vl_progress progress = cli_progress();
    int64_t best = 0;
    for (int64_t p = 0; !code && p < count; p++) {
        int64_t za = pair_a >= 0 ? pair_a : p, zb = pair_a >= 0 ? pair_b : p;
        vl_status status = vl_register_slice_pair(&features[0], za, &features[1], zb, match.ratio, &match.ransac,
                                                  &options.device, &results[p].pair, &results[p].matches,
                                                  &results[p].inliers);
        if (status != VL_OK)
            code = cli_status_error(status);
        else if (results[p].pair.inliers > results[best].pair.inliers)
            best = p;
        vl_progress_report(&progress, "match", (double)(p + 1) / (double)count);
    }
    if (!code) {
        vl_status status = write_matches(cli_outputs_staged(&outputs, 0), results, count, &features[0], &features[1]);
        if (status == VL_OK)
            status = write_transforms(cli_outputs_staged(&outputs, 1), cli_outputs_staged(&outputs, 2), results, count,
                                      match.ransac.model);
        if (status == VL_OK)
            status = write_side_by_side(cli_outputs_staged(&outputs, 3), &inputs[0], &inputs[1], &results[best],
                                        &features[0], &features[1]);
        code = status == VL_OK ? cli_outputs_commit(&outputs) : cli_status_error(status);
    }
    if (!code && !options.quiet) {
        const vl_slice_pair *s = &results[best].pair;
        printf("%lld slice pair(s); best %lld:%lld with %lld of %lld matches as inliers: rotation %.3f deg, scale "
               "%.4f, shift %.2f,%.2f px, residual %.3f px -> %s\n",
               (long long)count, (long long)s->slice_a, (long long)s->slice_b, (long long)s->inliers,
               (long long)s->matches, s->rotation_deg + 0.0, s->scale, s->matrix[2], s->matrix[5], s->residual_rms, output);
        if (!s->found)
            cli_warning("no slice pair had %d matches agreeing on one transform", match.ransac.min_inliers);
    }
    if (code)
        cli_outputs_abort(&outputs);
    for (int64_t p = 0; results && p < count; p++) {
        free(results[p].matches);
        free(results[p].inliers);
    }
    free(results);
    vl_sift_features_free(&features[0]);
    vl_sift_features_free(&features[1]);
    features_input_free(&inputs[0]);
    features_input_free(&inputs[1]);
    return code;
}
