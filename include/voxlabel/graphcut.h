/* voxlabel: minimum s-t cuts on 2D and 3D grid graphs, and seeded Boykov-Jolly segmentation with them.
 *
 * A grid graph has one node per voxel (x fastest, as vl_volume), a capacity from the source to every node,
 * one from every node to the sink, and one for each directed arc to a neighbour: connectivity 4 or 8 in a
 * plane (nz == 1), 6 or 26 in 3D. Capacities are non-negative 32-bit integers, so the maximum flow, the
 * minimum cut and the energy of a labelling are exact 64-bit integers, the same on the CPU (Boykov-
 * Kolmogorov) and on the GPU (push-relabel): a minimum cut is not unique, but its value is.
 *
 * Arcs: direction d of a connectivity runs from node p to p + offset(d); d ^ 1 is the opposite direction,
 * so the reverse arc of (p, d) is (p + offset(d), d ^ 1). Arcs that would leave the grid do not exist;
 * their capacities are ignored. */
#ifndef VOXLABEL_GRAPHCUT_H
#define VOXLABEL_GRAPHCUT_H

#include <stdint.h>

#include "voxlabel/device.h"
#include "voxlabel/error.h"
#include "voxlabel/progress.h"
#include "voxlabel/volume.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_grid_graph {
    int64_t nx, ny, nz;
    int connectivity;     /* 4 or 8 (nz == 1), 6 or 26 */
    int32_t *source_cap;  /* [n]: source -> p */
    int32_t *sink_cap;    /* [n]: p -> sink */
    int32_t *arc_cap;     /* [n * directions]: p -> p + offset(d) at arc_cap[p * directions + d] */
} vl_grid_graph;

/* Arcs per node: 4, 8, 6 or 26; 0 for any other connectivity. */
int vl_grid_directions(int connectivity);
/* The offset (dx, dy, dz) of direction d (0 <= d < vl_grid_directions). */
void vl_grid_direction_offset(int connectivity, int d, int offset[3]);

/* Allocates a graph with every capacity 0. VL_ERR_ARGUMENT for a connectivity that does not fit the grid
 * (4/8 need nz == 1) or non-positive sizes; VL_ERR_MEMORY when it does not fit. */
vl_status vl_grid_graph_create(vl_grid_graph *graph, int64_t nx, int64_t ny, int64_t nz, int connectivity);
void vl_grid_graph_free(vl_grid_graph *graph);

/* Energy of a labelling (segment[p] = 1 on the source side, 0 on the sink side): the capacities of the
 * source arcs of sink-side nodes, the sink arcs of source-side nodes and the arcs from source-side to
 * sink-side neighbours. For a minimum cut it equals the maximum flow. */
int64_t vl_grid_cut_energy(const vl_grid_graph *graph, const uint8_t *segment);

#define VL_MAXFLOW_RELABEL_INTERVAL 24 /* GPU: fewest push/relabel sweeps between global relabels, by default */

typedef struct vl_maxflow_options {
    vl_device device;     /* default AUTO */
    int64_t gpu_relabel_interval; /* GPU: fewest sweeps between global relabels (more after a relabel of many passes);
                                   * 0 = VL_MAXFLOW_RELABEL_INTERVAL */
} vl_maxflow_options;

typedef struct vl_maxflow_result {
    int64_t flow;          /* maximum flow = minimum cut value */
    int64_t iterations;    /* CPU: augmenting paths; GPU: push/relabel sweeps */
    int64_t gpu_relabels;  /* GPU: global relabels */
    int64_t gpu_launches;  /* GPU: kernel launches of the solve, 1 where it ran as one persistent kernel */
    double solve_seconds;  /* the solver proper, without building or copying the graph (GPU: CUDA events) */
    vl_device_outcome outcome;
} vl_maxflow_result;

void vl_maxflow_options_default(vl_maxflow_options *options);

/* Maximum flow of `graph`; segment[p] (n bytes, may be NULL) receives the source side of a minimum cut
 * (1) or the sink side (0). The graph is not modified. */
vl_status vl_maxflow(const vl_grid_graph *graph, uint8_t *segment, const vl_maxflow_options *options,
                     vl_maxflow_result *result);
/* The CPU reference (Boykov-Kolmogorov), which vl_maxflow runs for VL_DEVICE_CPU. */
vl_status vl_maxflow_cpu(const vl_grid_graph *graph, uint8_t *segment, vl_maxflow_result *result);

/* ---- Seeded segmentation: Boykov-Jolly (ICCV 2001) with GrabCut-style re-estimation and Lou et al.'s
 * object prior.
 *
 * E(L) = sum_p R_p(L_p) + sum_{p,q neighbours} B_pq [L_p != L_q], in nats, over a grid of the image:
 *   R_p(obj) = unary_weight * -ln P(I_p | object GMM),  R_p(bkg) likewise with the background GMM: each GMM has
 *              `components` 1D Gaussians fitted by EM on the intensities under the seeds (then, in every
 *              further round, on the current object and background); the difference R_p(bkg) - R_p(obj) is
 *              clamped to +-VL_CUT_UNARY_CLAMP nats;
 *   prior:     + prior_weight on R_p(bkg) where the prior mask is set, on R_p(obj) where it is not (a voxel
 *              may leave the prior at that price);
 *   B_pq     = boundary_weight * exp(-beta (I_p - I_q)^2) / dist(p, q), dist in units of the finest spacing,
 *              beta = 1 / (2 <(I_p - I_q)^2>) over all neighbour pairs unless given (OpenCV grabCut's rule);
 *   seeds:     1 = object, 2 = background: hard constraints (a terminal arc larger than any cut around it).
 * Nats are quantised to 1/VL_CUT_UNITS_PER_NAT so the cut is solved in exact integers. With connectivity 4
 * or 8 and several slices, every slice is cut on its own (the GMMs are shared). */
#define VL_CUT_UNITS_PER_NAT 64
#define VL_CUT_UNARY_CLAMP 50.0

typedef struct vl_cut_options {
    int connectivity;       /* 4, 8, 6, 26; 0 = 8 for one slice, 6 for a volume */
    int components;         /* Gaussians per class, default 5 */
    double unary_weight;    /* default 1 */
    double boundary_weight; /* default 50 (grabCut's gamma) */
    double beta;            /* 0 = from the image */
    int rounds;             /* 1 = plain Boykov-Jolly; more: re-fit the GMMs on the result and cut again */
    const vl_volume *prior; /* NULL, or a mask on the image's grid (nonzero = object) */
    double prior_weight;    /* nats per voxel, default 2 (used only with a prior) */
    vl_maxflow_options maxflow;
    vl_progress progress;   /* "graph cut": after every slice (4/8) or volume cut, over all rounds */
} vl_cut_options;

typedef struct vl_cut_result {
    int64_t energy;         /* energy of the final labelling, in 1/VL_CUT_UNITS_PER_NAT nats (constants dropped) */
    int64_t cut_value;      /* maximum flow of the final graph(s): equals energy */
    int64_t iterations;     /* solver iterations, summed over rounds and slices */
    int rounds_run;
    int64_t object_voxels, object_seeds, background_seeds;
    double beta;            /* the beta used */
    vl_device_outcome outcome;
} vl_cut_result;

void vl_cut_options_default(vl_cut_options *options);

/* Checks `seeds` against `image`: same size (and geometry within 1e-3 relative spacing, 0.1 voxel origin),
 * values 0, 1 and 2 only, and both classes present. VL_ERR_INPUT with what is wrong. */
vl_status vl_cut_check_seeds(const vl_volume *image, const vl_volume *seeds);

/* Segments `image` (any dtype) from `seeds` into `segmentation` (created: U8, 1 = object, image geometry). */
vl_status vl_cut_segment(const vl_volume *image, const vl_volume *seeds, const vl_cut_options *options,
                         vl_volume *segmentation, vl_cut_result *result);

#ifdef __cplusplus
}
#endif
#endif
