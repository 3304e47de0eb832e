/* Binary morphology: names, structuring elements and the CPU/GPU dispatch of vl_morphology_apply. */
#include <stdlib.h>
#include <string.h>

#include "core/device.h"
#include "voxlabel/error.h"
#include "image2d/morphology_gpu.h"

static const char *const op_names[] = {"erode", "dilate", "open", "close"};
static const char *const se_names[] = {"box", "cross", "ball", "thesis"};

const char *vl_morphology_op_name(vl_morphology_op op)
{
    return (unsigned)op < 4 ? op_names[op] : "unknown";
}

vl_status vl_morphology_op_parse(const char *text, vl_morphology_op *op)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, op_names[i]) == 0) {
            *op = (vl_morphology_op)i;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "morphology: '%s' is not one of erode, dilate, open, close", text);
}

const char *vl_structuring_element_name(vl_structuring_element se)
{
    return (unsigned)se < 4 ? se_names[se] : "unknown";
}

vl_status vl_structuring_element_parse(const char *text, vl_structuring_element *se)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(text, se_names[i]) == 0) {
            *se = (vl_structuring_element)i;
            return VL_OK;
        }
    return vl_fail(VL_ERR_ARGUMENT, "structuring element: '%s' is not one of box, cross, ball, thesis", text);
}

static int in_element(vl_structuring_element shape, int radius, int dx, int dy, int dz)
{
    switch (shape) {
    case VL_SE_BOX: return 1;
    case VL_SE_CROSS: return (dx != 0) + (dy != 0) + (dz != 0) <= 1;
    case VL_SE_BALL: return dx * dx + dy * dy + dz * dz <= radius * radius;
    case VL_SE_THESIS: break;
    }
    return 0;
}

static void build_element(vl_structuring_element shape, int radius, int planar, vl_morph_element *element)
{
    int rz = planar ? 0 : radius;
    element->count = 0;
    element->reach[0] = element->reach[1] = radius;
    element->reach[2] = rz;
    for (int dz = -rz; dz <= rz; dz++)
        for (int dy = -radius; dy <= radius; dy++)
            for (int dx = -radius; dx <= radius; dx++)
                if (in_element(shape, radius, dx, dy, dz)) {
                    element->dx[element->count] = (int8_t)dx;
                    element->dy[element->count] = (int8_t)dy;
                    element->dz[element->count] = (int8_t)dz;
                    element->count++;
                }
}

int vl_morph_plan(vl_morphology_op op, vl_structuring_element se, int radius, int planar, vl_morph_pass passes[2])
{
    if ((unsigned)op > VL_MORPH_CLOSE || (unsigned)se > VL_SE_THESIS) {
        vl_fail(VL_ERR_ARGUMENT, "morphology: unknown operation or structuring element");
        return 0;
    }
    int limit = planar ? VL_MORPH_MAX_RADIUS_2D : VL_MORPH_MAX_RADIUS_3D;
    if (se != VL_SE_THESIS && (radius < 0 || radius > limit)) {
        vl_fail(VL_ERR_ARGUMENT, "morphology: radius %d is outside 0..%d for a %s element", radius, limit,
                planar ? "2D" : "3D");
        return 0;
    }
    int erode_first = op == VL_MORPH_ERODE || op == VL_MORPH_OPEN;
    int count = op == VL_MORPH_OPEN || op == VL_MORPH_CLOSE ? 2 : 1;
    for (int i = 0; i < count; i++) {
        int dilate = (i == 0) != erode_first;
        passes[i].dilate = dilate;
        if (se == VL_SE_THESIS)
            build_element(VL_SE_CROSS, dilate ? 1 : 2, 1, &passes[i].element);
        else
            build_element(se, radius, planar, &passes[i].element);
    }
    return count;
}

typedef struct morphology_call {
    vl_volume *mask;
    const vl_morph_pass *passes;
    int count;
    int gpu_index;
} morphology_call;

static vl_status morphology_gpu(void *context)
{
    const morphology_call *c = context;
    return vl_morphology_gpu(c->mask->data, c->mask->nx, c->mask->ny, c->mask->nz, c->passes, c->count,
                             c->gpu_index);
}

static vl_status morphology_cpu(void *context)
{
    const morphology_call *c = context;
    return vl_morphology_cpu(c->mask->data, c->mask->nx, c->mask->ny, c->mask->nz, c->passes, c->count);
}

vl_status vl_morphology_apply(vl_volume *mask, vl_morphology_op op, vl_structuring_element se, int radius,
                              int per_slice, const vl_device *device, vl_device_outcome *outcome)
{
    if (!mask || !mask->data || mask->dtype != VL_U8)
        return vl_fail(VL_ERR_ARGUMENT, "morphology: the mask must be a U8 volume");
    vl_morph_pass *passes = malloc(2 * sizeof *passes);
    if (!passes)
        return vl_fail(VL_ERR_MEMORY, "morphology: out of memory");
    int planar = per_slice || mask->nz == 1;
    int count = vl_morph_plan(op, se, radius, planar, passes);
    vl_status status = VL_ERR_ARGUMENT;
    if (count) {
        morphology_call call = {mask, passes, count, device ? device->gpu_index : 0};
        status = vl_device_run(device, morphology_gpu, morphology_cpu, &call, outcome);
    }
    free(passes);
    return status;
}
