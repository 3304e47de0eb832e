/* Class maps for the multilabel labeller: which volumes are class maps, and the cleaned class map that
 * a per-class clean-up gives back (removed islands emptied or given to the neighbour they touch most). */
#include <stdlib.h>
#include <string.h>

#include "core/parallel.h"
#include "voxlabel/error.h"
#include "voxlabel/label.h"

vl_status vl_class_map_check(const vl_volume *classes)
{
    switch (classes->dtype) {
    case VL_U8:
    case VL_U16:
    case VL_U32:
        return VL_OK;
    case VL_I16: {
        const int16_t *value = classes->data;
        const int64_t n = vl_volume_voxels(classes);
        for (int64_t i = 0; i < n; i++)
            if (value[i] < 0) {
                const int64_t slice = classes->nx * classes->ny;
                return vl_fail(VL_ERR_ARGUMENT,
                               "multilabel: class %d at voxel (%lld, %lld, %lld) is negative; a class map holds "
                               "0 (background) and positive class values",
                               value[i], (long long)(i % classes->nx), (long long)(i % slice / classes->nx),
                               (long long)(i / slice));
            }
        return VL_OK;
    }
    default:
        return vl_fail(VL_ERR_ARGUMENT,
                       "multilabel: a class map must hold integer classes (u8, u16, u32, or i16 without negative "
                       "values), not %s",
                       vl_dtype_name(classes->dtype));
    }
}

static uint32_t class_at(const vl_volume *classes, int64_t i)
{
    switch (classes->dtype) {
    case VL_U8: return ((const uint8_t *)classes->data)[i];
    case VL_I16:
    case VL_U16: return ((const uint16_t *)classes->data)[i];
    default: return ((const uint32_t *)classes->data)[i];
    }
}

static void set_class(vl_volume *classes, int64_t i, uint32_t value)
{
    switch (classes->dtype) {
    case VL_U8: ((uint8_t *)classes->data)[i] = (uint8_t)value; break;
    case VL_I16:
    case VL_U16: ((uint16_t *)classes->data)[i] = (uint16_t)value; break;
    default: ((uint32_t *)classes->data)[i] = value; break;
    }
}

/* One face contact of a removed component with a surviving voxel of class `neighbour`. */
typedef struct contact {
    uint32_t island, neighbour;
} contact;

static int compare_contacts(const void *a, const void *b)
{
    const contact *x = a, *y = b;
    if (x->island != y->island)
        return (x->island > y->island) - (x->island < y->island);
    return (x->neighbour > y->neighbour) - (x->neighbour < y->neighbour);
}

/* Removed islands of `cleaned` (voxels of `classes` whose label is 0) take the class of the surviving
 * voxels they share the most faces with. The islands are the components of the removed voxels' class
 * map: two removed pieces of one class that touch were one component, so they are one island again. */
static vl_status fill_from_neighbours(const vl_volume *classes, const vl_volume *labels, int connectivity,
                                      vl_volume *cleaned)
{
    const int64_t nx = classes->nx, ny = classes->ny, nz = classes->nz, n = vl_volume_voxels(classes);
    const uint32_t *label = labels->data;
    vl_volume removed = {0}, islands = {0};
    vl_label_result found = {0};
    contact *contacts = NULL;
    uint32_t *winner = NULL;
    vl_status status = vl_volume_create(&removed, nx, ny, nz, classes->dtype);
    if (status != VL_OK)
        return status;
    int64_t removed_voxels = 0;
    for (int64_t i = 0; i < n; i++)
        if (!label[i] && class_at(classes, i)) {
            set_class(&removed, i, class_at(classes, i));
            removed_voxels++;
        }
    if (removed_voxels == 0)
        goto done;
    vl_label_options options;
    vl_label_options_default(&options);
    options.connectivity = connectivity;
    options.order = VL_ORDER_MATLAB_XY;
    if ((status = vl_label_multilabel_cpu(&removed, &islands, &options, &found)) != VL_OK)
        goto done;
    /* At most one contact per face of every removed voxel. */
    contacts = malloc((size_t)removed_voxels * 6 * sizeof *contacts);
    winner = calloc((size_t)found.count + 1, sizeof *winner);
    if (!contacts || !winner) {
        status = vl_fail(VL_ERR_MEMORY, "multilabel: no memory to fill %u removed islands", found.count);
        goto done;
    }
    const uint32_t *island = islands.data;
    size_t contact_count = 0;
    const int per_slice = connectivity == 4 || connectivity == 8;
    for (int64_t z = 0; z < nz; z++)
        for (int64_t y = 0; y < ny; y++)
            for (int64_t x = 0; x < nx; x++) {
                const int64_t i = x + nx * (y + ny * z);
                if (!island[i])
                    continue;
                const int64_t step[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, 1, 0}, {0, 0, -1}, {0, 0, 1}};
                for (int s = 0; s < (per_slice ? 4 : 6); s++) {
                    const int64_t ux = x + step[s][0], uy = y + step[s][1], uz = z + step[s][2];
                    if (ux < 0 || uy < 0 || uz < 0 || ux >= nx || uy >= ny || uz >= nz)
                        continue;
                    const int64_t u = ux + nx * (uy + ny * uz);
                    if (label[u])
                        contacts[contact_count++] = (contact){island[i], class_at(classes, u)};
                }
            }
    qsort(contacts, contact_count, sizeof *contacts, compare_contacts);
    /* Runs of equal (island, neighbour) in sorted order: the longest run per island wins, the first
     * (lowest class) on a tie. */
    for (size_t begin = 0, best_length = 0; begin < contact_count;) {
        size_t end = begin + 1;
        while (end < contact_count && compare_contacts(&contacts[begin], &contacts[end]) == 0)
            end++;
        if (begin == 0 || contacts[begin].island != contacts[begin - 1].island)
            best_length = 0;
        if (end - begin > best_length) {
            best_length = end - begin;
            winner[contacts[begin].island] = contacts[begin].neighbour;
        }
        begin = end;
    }
    for (int64_t i = 0; i < n; i++)
        if (island[i])
            set_class(cleaned, i, winner[island[i]]);
done:
    free(contacts);
    free(winner);
    vl_label_result_free(&found);
    vl_volume_free(&islands);
    vl_volume_free(&removed);
    return status;
}

/* The survivors' classes over a range of voxels, one loop per width (no type switch per voxel). */
typedef struct copy_job {
    const vl_volume *classes;
    const uint32_t *label;
    vl_volume *cleaned;
    int64_t begin, end;
} copy_job;

static void *copy_survivors(void *argument)
{
    const copy_job *job = argument;
    const uint32_t *label = job->label;
    switch (job->classes->dtype) {
    case VL_U8: {
        const uint8_t *in = job->classes->data;
        uint8_t *out = job->cleaned->data;
        for (int64_t i = job->begin; i < job->end; i++)
            out[i] = label[i] ? in[i] : 0;
        break;
    }
    case VL_I16:
    case VL_U16: {
        const uint16_t *in = job->classes->data;
        uint16_t *out = job->cleaned->data;
        for (int64_t i = job->begin; i < job->end; i++)
            out[i] = label[i] ? in[i] : 0;
        break;
    }
    default: {
        const uint32_t *in = job->classes->data;
        uint32_t *out = job->cleaned->data;
        for (int64_t i = job->begin; i < job->end; i++)
            out[i] = label[i] ? in[i] : 0;
        break;
    }
    }
    return NULL;
}

vl_status vl_class_map_clean(const vl_volume *classes, const vl_volume *labels, vl_class_fill fill, int connectivity,
                             vl_volume *cleaned)
{
    memset(cleaned, 0, sizeof *cleaned);
    vl_status status = vl_class_map_check(classes);
    if (status != VL_OK)
        return status;
    if (labels->dtype != VL_U32 || labels->nx != classes->nx || labels->ny != classes->ny || labels->nz != classes->nz)
        return vl_fail(VL_ERR_ARGUMENT, "multilabel: the labels (%s %lldx%lldx%lld) do not match the class map",
                       vl_dtype_name(labels->dtype), (long long)labels->nx, (long long)labels->ny,
                       (long long)labels->nz);
    if ((status = vl_volume_create_uninitialised(cleaned, classes->nx, classes->ny, classes->nz, classes->dtype)) !=
        VL_OK)
        return status;
    cleaned->geometry = classes->geometry;
    const int threads = vl_cpu_thread_count(0);
    const int64_t n = vl_volume_voxels(classes);
    copy_job jobs[VL_MAX_THREADS];
    for (int t = 0; t < threads; t++)
        jobs[t] = (copy_job){classes, labels->data, cleaned, n * t / threads, n * (t + 1) / threads};
    vl_run_parallel(copy_survivors, jobs, sizeof jobs[0], threads);
    if (fill == VL_FILL_NEIGHBOUR && (status = fill_from_neighbours(classes, labels, connectivity, cleaned)) != VL_OK)
        vl_volume_free(cleaned);
    return status;
}
