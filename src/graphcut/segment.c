/* Seeded Boykov-Jolly segmentation on top of vl_maxflow: seeds and their checks, the intensity GMMs, the
 * integer graph of include/voxlabel/graphcut.h's energy, GrabCut-style rounds. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "graphcut/gmm1d.h"
#include "voxlabel/error.h"
#include "voxlabel/graphcut.h"

#define GMM_SAMPLES_MAX 200000 /* voxels per class the GMMs are fitted on (evenly strided) */

void vl_cut_options_default(vl_cut_options *options)
{
    memset(options, 0, sizeof *options);
    options->components = 5;
    options->unary_weight = 1.0;
    options->boundary_weight = 50.0;
    options->rounds = 1;
    options->prior_weight = 2.0;
    vl_maxflow_options_default(&options->maxflow);
}

static int geometry_matches(const vl_geometry *a, const vl_geometry *b)
{
    double finest = fmin(a->spacing[0], fmin(a->spacing[1], a->spacing[2]));
    for (int c = 0; c < 3; c++) {
        if (fabs(a->spacing[c] - b->spacing[c]) > 1e-3 * fabs(a->spacing[c]))
            return 0;
        if (fabs(a->origin[c] - b->origin[c]) > 0.1 * finest)
            return 0;
    }
    for (int c = 0; c < 9; c++)
        if (fabs(a->direction[c] - b->direction[c]) > 1e-3)
            return 0;
    return 1;
}

vl_status vl_cut_check_seeds(const vl_volume *image, const vl_volume *seeds)
{
    if (seeds->nx != image->nx || seeds->ny != image->ny || seeds->nz != image->nz)
        return vl_fail(VL_ERR_INPUT, "seeds: %lldx%lldx%lld voxels, but the image has %lldx%lldx%lld; draw the seeds "
                       "on this image's grid", (long long)seeds->nx, (long long)seeds->ny, (long long)seeds->nz,
                       (long long)image->nx, (long long)image->ny, (long long)image->nz);
    if (!geometry_matches(&image->geometry, &seeds->geometry))
        return vl_fail(VL_ERR_INPUT, "seeds: same size as the image but a different geometry (spacing %g,%g,%g "
                       "origin %g,%g,%g mm vs the image's %g,%g,%g and %g,%g,%g mm); draw the seeds on this image",
                       seeds->geometry.spacing[0], seeds->geometry.spacing[1], seeds->geometry.spacing[2],
                       seeds->geometry.origin[0], seeds->geometry.origin[1], seeds->geometry.origin[2],
                       image->geometry.spacing[0], image->geometry.spacing[1], image->geometry.spacing[2],
                       image->geometry.origin[0], image->geometry.origin[1], image->geometry.origin[2]);
    int64_t n = vl_volume_voxels(seeds), counts[3] = {0, 0, 0};
    for (int64_t i = 0; i < n; i++) {
        double v = vl_volume_value(seeds, i);
        if (v != 0 && v != 1 && v != 2)
            return vl_fail(VL_ERR_INPUT, "seeds: value %g at voxel %lld; seeds hold 0 (none), 1 (object) and 2 "
                           "(background) only", v, (long long)i);
        counts[(int)v]++;
    }
    if (!counts[1] || !counts[2])
        return vl_fail(VL_ERR_INPUT, "seeds: only %s seeds (label %d); the cut needs both object (1) and background "
                       "(2) seeds", counts[1] ? "object" : counts[2] ? "background" : "no", counts[1] ? 1 : 2);
    return VL_OK;
}

typedef struct cut_context {
    const vl_volume *image;
    const vl_cut_options *options;
    int connectivity, directions, per_slice;
    int offsets[26][3];
    double *intensity;
    uint8_t *seed;            /* 0, 1, 2 */
    double arc_weight[26];    /* boundary_weight / dist(d) */
    double beta;
    int32_t hard;             /* terminal capacity of a seed */
    vl_gmm1d object, background;
} cut_context;

static int in_grid(const cut_context *c, int64_t x, int64_t y, int64_t z, int64_t nz)
{
    return x >= 0 && y >= 0 && z >= 0 && x < c->image->nx && y < c->image->ny && z < nz;
}

/* beta = 1 / (2 <(I_p - I_q)^2>) over the neighbour pairs the graphs will hold. */
static double estimate_beta(const cut_context *c)
{
    const vl_volume *im = c->image;
    double sum = 0;
    int64_t pairs = 0;
    for (int64_t z = 0; z < im->nz; z++)
        for (int64_t y = 0; y < im->ny; y++)
            for (int64_t x = 0; x < im->nx; x++) {
                int64_t p = x + im->nx * (y + im->ny * z);
                for (int d = 0; d < c->directions; d += 2) {
                    int64_t qx = x + c->offsets[d][0], qy = y + c->offsets[d][1], qz = z + c->offsets[d][2];
                    if (!in_grid(c, qx, qy, qz, im->nz))
                        continue;
                    double diff = c->intensity[p] - c->intensity[qx + im->nx * (qy + im->ny * qz)];
                    sum += diff * diff;
                    pairs++;
                }
            }
    return pairs && sum > 0 ? 1.0 / (2.0 * sum / (double)pairs) : 0.0;
}

/* Fits the GMM of `label` (1 object, 2 background) on the voxels where label_of[i] == label. */
static vl_status fit_class(const cut_context *c, const uint8_t *label_of, uint8_t label, vl_gmm1d *gmm)
{
    int64_t n = vl_volume_voxels(c->image), count = 0;
    for (int64_t i = 0; i < n; i++)
        count += label_of[i] == label;
    int64_t stride = count > GMM_SAMPLES_MAX ? (count + GMM_SAMPLES_MAX - 1) / GMM_SAMPLES_MAX : 1;
    double *samples = malloc((size_t)(count / stride + 1) * sizeof *samples);
    if (!samples)
        return vl_fail(VL_ERR_MEMORY, "cut: out of memory for the intensity model");
    int64_t taken = 0, seen = 0;
    for (int64_t i = 0; i < n; i++)
        if (label_of[i] == label && seen++ % stride == 0)
            samples[taken++] = c->intensity[i];
    vl_status status = vl_gmm1d_fit(samples, taken, c->options->components, gmm);
    free(samples);
    return status;
}

static int32_t quantise(double nats)
{
    return (int32_t)floor(nats * VL_CUT_UNITS_PER_NAT + 0.5);
}

/* Fills the graph of slices [z0, z0 + graph->nz). */
static void build_graph(const cut_context *c, int64_t z0, vl_grid_graph *graph)
{
    const vl_volume *im = c->image;
    const vl_cut_options *o = c->options;
    const int64_t plane = im->nx * im->ny, n = plane * graph->nz;
    const double *intensity = c->intensity + z0 * plane;
    const uint8_t *seed = c->seed + z0 * plane;
    for (int64_t p = 0; p < n; p++) {
        if (seed[p]) {
            graph->source_cap[p] = seed[p] == 1 ? c->hard : 0;
            graph->sink_cap[p] = seed[p] == 2 ? c->hard : 0;
            continue;
        }
        /* d = R(bkg) - R(obj): positive where the object is the likelier class. */
        double d = o->unary_weight * (vl_gmm1d_log_density(&c->object, intensity[p]) -
                                      vl_gmm1d_log_density(&c->background, intensity[p]));
        d = fmax(-VL_CUT_UNARY_CLAMP, fmin(VL_CUT_UNARY_CLAMP, d));
        if (o->prior)
            d += vl_volume_value(o->prior, z0 * plane + p) != 0 ? o->prior_weight : -o->prior_weight;
        graph->source_cap[p] = d > 0 ? quantise(d) : 0;
        graph->sink_cap[p] = d < 0 ? quantise(-d) : 0;
    }
    for (int64_t z = 0; z < graph->nz; z++)
        for (int64_t y = 0; y < im->ny; y++)
            for (int64_t x = 0; x < im->nx; x++) {
                int64_t p = x + im->nx * (y + im->ny * z);
                for (int d = 0; d < c->directions; d++) {
                    int64_t qx = x + c->offsets[d][0], qy = y + c->offsets[d][1], qz = z + c->offsets[d][2];
                    int32_t cap = 0;
                    if (in_grid(c, qx, qy, qz, graph->nz)) {
                        double diff = intensity[p] - intensity[qx + im->nx * (qy + im->ny * qz)];
                        cap = quantise(c->arc_weight[d] * exp(-c->beta * diff * diff));
                    }
                    graph->arc_cap[p * c->directions + d] = cap;
                }
            }
}

/* One cut of the whole image (slice by slice for 4/8): labels into `segment`, totals into `result`;
 * `round` (0-based) places its progress among the rounds. */
static vl_status cut_once(cut_context *c, uint8_t *segment, vl_cut_result *result, int round)
{
    const vl_volume *im = c->image;
    const int64_t slab = c->per_slice ? 1 : im->nz, plane = im->nx * im->ny;
    vl_grid_graph graph;
    vl_status status = vl_grid_graph_create(&graph, im->nx, im->ny, slab, c->connectivity);
    result->energy = result->cut_value = 0;
    for (int64_t z0 = 0; status == VL_OK && z0 < im->nz; z0 += slab) {
        build_graph(c, z0, &graph);
        vl_maxflow_result flow;
        status = vl_maxflow(&graph, segment + z0 * plane, &c->options->maxflow, &flow);
        if (status != VL_OK)
            break;
        result->cut_value += flow.flow;
        result->energy += vl_grid_cut_energy(&graph, segment + z0 * plane);
        result->iterations += flow.iterations;
        result->outcome = flow.outcome;
        vl_progress_report(&c->options->progress, "graph cut",
                           ((double)round + (double)(z0 + slab) / (double)im->nz) / c->options->rounds);
    }
    vl_grid_graph_free(&graph);
    return status;
}

vl_status vl_cut_segment(const vl_volume *image, const vl_volume *seeds, const vl_cut_options *options,
                         vl_volume *segmentation, vl_cut_result *result)
{
    memset(segmentation, 0, sizeof *segmentation);
    memset(result, 0, sizeof *result);
    vl_cut_options defaults;
    if (!options) {
        vl_cut_options_default(&defaults);
        options = &defaults;
    }
    vl_status status = vl_cut_check_seeds(image, seeds);
    if (status != VL_OK)
        return status;
    int connectivity = options->connectivity ? options->connectivity : image->nz == 1 ? 8 : 6;
    if (!vl_grid_directions(connectivity))
        return vl_fail(VL_ERR_ARGUMENT, "--conn: %d is not 4, 8, 6 or 26", connectivity);
    if (options->components < 1 || options->components > VL_GMM_MAX_COMPONENTS)
        return vl_fail(VL_ERR_ARGUMENT, "--components: %d is outside 1..%d", options->components, VL_GMM_MAX_COMPONENTS);
    if (options->rounds < 1 || options->rounds > 100)
        return vl_fail(VL_ERR_ARGUMENT, "--rounds: %d is outside 1..100", options->rounds);
    if (!(options->unary_weight >= 0) || !(options->boundary_weight >= 0) || !(options->prior_weight >= 0) ||
        !(options->beta >= 0) || options->boundary_weight * VL_CUT_UNITS_PER_NAT * 26 > 1e8 ||
        options->prior_weight > 1e4)
        return vl_fail(VL_ERR_ARGUMENT, "cut: weights must be finite and non-negative (boundary <= 60000, prior "
                       "<= 10000 nats)");
    if (options->prior && (options->prior->nx != image->nx || options->prior->ny != image->ny ||
                           options->prior->nz != image->nz))
        return vl_fail(VL_ERR_INPUT, "--prior: %lldx%lldx%lld voxels, but the image has %lldx%lldx%lld",
                       (long long)options->prior->nx, (long long)options->prior->ny, (long long)options->prior->nz,
                       (long long)image->nx, (long long)image->ny, (long long)image->nz);

    cut_context c;
    memset(&c, 0, sizeof c);
    c.image = image;
    c.options = options;
    c.connectivity = connectivity;
    c.directions = vl_grid_directions(connectivity);
    c.per_slice = connectivity == 4 || connectivity == 8;
    const double *spacing = image->geometry.spacing;
    double finest = fmin(spacing[0], fmin(spacing[1], c.per_slice ? spacing[0] : spacing[2]));
    double hard = 1;
    for (int d = 0; d < c.directions; d++) {
        vl_grid_direction_offset(connectivity, d, c.offsets[d]);
        double dist = 0;
        for (int a = 0; a < 3; a++)
            dist += (c.offsets[d][a] * spacing[a]) * (c.offsets[d][a] * spacing[a]);
        c.arc_weight[d] = options->boundary_weight / (sqrt(dist) / finest);
        hard += quantise(c.arc_weight[d]);
    }
    c.hard = (int32_t)hard;

    const int64_t n = vl_volume_voxels(image);
    c.intensity = malloc((size_t)n * sizeof *c.intensity);
    c.seed = malloc((size_t)n);
    uint8_t *labels = NULL, *previous = malloc((size_t)n);
    if (!c.intensity || !c.seed || !previous) {
        free(c.intensity), free(c.seed), free(previous);
        return vl_fail(VL_ERR_MEMORY, "cut: out of memory for %lld voxels", (long long)n);
    }
    for (int64_t i = 0; i < n; i++) {
        c.intensity[i] = vl_volume_value(image, i);
        if (!isfinite(c.intensity[i])) {
            free(c.intensity), free(c.seed), free(previous);
            return vl_fail(VL_ERR_INPUT, "cut: image voxel %lld is not a finite number", (long long)i);
        }
        c.seed[i] = (uint8_t)vl_volume_value(seeds, i);
        result->object_seeds += c.seed[i] == 1;
        result->background_seeds += c.seed[i] == 2;
    }
    c.beta = options->beta > 0 ? options->beta : estimate_beta(&c);
    result->beta = c.beta;

    status = vl_volume_create(segmentation, image->nx, image->ny, image->nz, VL_U8);
    if (status == VL_OK) {
        segmentation->geometry = image->geometry;
        labels = segmentation->data;
        status = fit_class(&c, c.seed, 1, &c.object);
    }
    if (status == VL_OK)
        status = fit_class(&c, c.seed, 2, &c.background);
    for (int round = 1; status == VL_OK && round <= options->rounds; round++) {
        memcpy(previous, labels, (size_t)n);
        status = cut_once(&c, labels, result, round - 1);
        if (status != VL_OK)
            break;
        result->rounds_run = round;
        if (round > 1 && memcmp(previous, labels, (size_t)n) == 0) {
            if (round < options->rounds)
                vl_progress_report(&options->progress, "graph cut", 1.0);
            break;
        }
        if (round < options->rounds) {
            /* Re-estimate on the result: object = 1, background = 2 (as the seeds code them). */
            for (int64_t i = 0; i < n; i++)
                previous[i] = labels[i] ? 1 : 2;
            status = fit_class(&c, previous, 1, &c.object);
            if (status == VL_OK)
                status = fit_class(&c, previous, 2, &c.background);
        }
    }
    if (status == VL_OK)
        for (int64_t i = 0; i < n; i++)
            result->object_voxels += labels[i];
    else
        vl_volume_free(segmentation);
    free(c.intensity);
    free(c.seed);
    free(previous);
    return status;
}
