/* Slice-pair registration from SIFT features: ratio-test matches between two slices, a RANSAC transform,
 * and the search of the best-matching slice of one series for every slice of another. */
#include <stdlib.h>
#include <string.h>

#include "voxlabel/features.h"

static void identity(double m[6])
{
    const double e[6] = {1, 0, 0, 0, 1, 0};
    memcpy(m, e, sizeof e);
}

vl_status vl_register_slice_pair(const vl_sift_features *a, int64_t za, const vl_sift_features *b, int64_t zb,
                                 double ratio, const vl_ransac_options *ransac, const vl_device *device,
                                 vl_slice_pair *pair, vl_feature_match **matches_out, uint8_t **inliers_out)
{
    memset(pair, 0, sizeof *pair);
    pair->slice_a = za;
    pair->slice_b = zb;
    identity(pair->matrix);
    pair->scale = 1;
    if (matches_out)
        *matches_out = NULL;
    if (inliers_out)
        *inliers_out = NULL;
    if (za < 0 || za >= a->slices || zb < 0 || zb >= b->slices)
        return vl_fail(VL_ERR_ARGUMENT, "register: slice %lld or %lld out of range", (long long)za, (long long)zb);
    int64_t a0 = a->slice_start[za], an = a->slice_start[za + 1] - a0;
    int64_t b0 = b->slice_start[zb], bn = b->slice_start[zb + 1] - b0;
    vl_feature_match *matches = NULL;
    int64_t count = 0;
    vl_status status = vl_match_descriptors(a->descriptors + a0 * VL_SIFT_DESCRIPTOR_SIZE, an,
                                            b->descriptors + b0 * VL_SIFT_DESCRIPTOR_SIZE, bn, ratio, device, &matches,
                                            &count, NULL);
    if (status != VL_OK)
        return status;
    pair->matches = count;
    float *pa = malloc((size_t)(count + 1) * 2 * sizeof *pa), *pb = malloc((size_t)(count + 1) * 2 * sizeof *pb);
    if (!pa || !pb)
        status = vl_fail(VL_ERR_MEMORY, "register: out of memory");
    for (int64_t i = 0; status == VL_OK && i < count; i++) {
        const vl_sift_keypoint *ka = &a->keypoints[a0 + matches[i].query], *kb = &b->keypoints[b0 + matches[i].train];
        pa[2 * i] = ka->x, pa[2 * i + 1] = ka->y;
        pb[2 * i] = kb->x, pb[2 * i + 1] = kb->y;
    }
    vl_ransac_result result = {0};
    if (status == VL_OK && count >= ransac->min_inliers) {
        vl_status estimate = vl_ransac_estimate(pa, pb, count, ransac, &result);
        if (estimate == VL_OK) {
            pair->found = 1;
            pair->inliers = result.inliers;
            memcpy(pair->matrix, result.matrix, sizeof pair->matrix);
            pair->rotation_deg = result.rotation_deg;
            pair->scale = result.scale;
            pair->residual_rms = result.residual_rms;
        } else if (estimate != VL_ERR_INPUT) {
            status = estimate;
        }
    }
    if (status == VL_OK && inliers_out) {
        *inliers_out = calloc((size_t)(count ? count : 1), 1);
        if (!*inliers_out)
            status = vl_fail(VL_ERR_MEMORY, "register: out of memory");
        else if (pair->found)
            memcpy(*inliers_out, result.inlier_mask, (size_t)count);
    }
    vl_ransac_result_free(&result);
    free(pa);
    free(pb);
    if (status == VL_OK && matches_out)
        *matches_out = matches;
    else
        free(matches);
    return status;
}

vl_status vl_register_slices(const vl_sift_features *a, const vl_sift_features *b, const int64_t *first,
                             const int64_t *last, const int64_t *centre, double ratio,
                             const vl_ransac_options *ransac, const vl_device *device, const vl_progress *progress,
                             vl_slice_pair *pairs)
{
    for (int64_t za = 0; za < a->slices; za++) {
        vl_slice_pair best;
        memset(&best, 0, sizeof best);
        best.slice_a = za;
        best.slice_b = -1;
        identity(best.matrix);
        best.scale = 1;
        for (int64_t zb = first[za]; zb <= last[za]; zb++) {
            vl_slice_pair pair;
            vl_status status = vl_register_slice_pair(a, za, b, zb, ratio, ransac, device, &pair, NULL, NULL);
            if (status != VL_OK)
                return status;
            if (!pair.found)
                continue;
            int64_t distance = llabs(zb - centre[za]), best_distance = llabs(best.slice_b - centre[za]);
            if (!best.found || pair.inliers > best.inliers ||
                (pair.inliers == best.inliers && distance < best_distance))
                best = pair;
        }
        pairs[za] = best;
        vl_progress_report(progress, "register", (double)(za + 1) / (double)a->slices);
    }
    return VL_OK;
}
