/* Internal template of the CPU labeller (src/label/ccl_cpu.c): the joins of one slice, one slab and one
 * slab seam over a row joiner. Included once per joiner with
 *   VL_JOIN_ROWS(parent, runs, row_a, row_b, reach)   the joiner of two rows' runs
 *   VL_JOIN(name)                                      the name of this instance's function `name`
 * so that every instance is compiled with its joiner inlined: the binary labeller's loops carry no test
 * of the multilabel one's class predicate. */
#if !defined(VL_JOIN_ROWS) || !defined(VL_JOIN)
#error "define VL_JOIN_ROWS and VL_JOIN before including ccl_join_template.h"
#endif

static void VL_JOIN(unite_slice)(uint32_t *parent, const vl_runs *runs, const connectivity_rule *rule, int64_t z)
{
    const int64_t ny = runs->ny;
    for (int64_t y = 0; y < ny; y++) {
        int64_t row = y + ny * z;
        if (runs->row_start[row] == runs->row_start[row + 1])
            continue;
        for (int n = 0; n < rule->count; n++) {
            int64_t ny_ = y + rule->rows[n].dy, nz_ = z + rule->rows[n].dz;
            if (ny_ < 0 || ny_ >= ny || nz_ < 0)
                continue;
            VL_JOIN_ROWS(parent, runs, row, ny_ + ny * nz_, rule->rows[n].reach);
        }
    }
}

/* Joins runs within one slab; the first slice of the slab is joined to the previous slab later. */
static void *VL_JOIN(unite_slab)(void *argument)
{
    slab_job *job = (slab_job *)argument;
    for (int64_t z = job->z_begin; z < job->z_end; z++) {
        if (z == job->z_begin) {
            const connectivity_rule in_slice = rows_within_slice(&job->rule);
            VL_JOIN(unite_slice)(job->parent, job->runs, &in_slice, z);
        } else {
            VL_JOIN(unite_slice)(job->parent, job->runs, &job->rule, z);
        }
    }
    return NULL;
}

/* Joins the first slice of a slab to the last slice of the one before. */
static void VL_JOIN(unite_seam)(uint32_t *parent, const vl_runs *runs, const connectivity_rule *rule, int64_t z)
{
    const connectivity_rule across = rows_across_slices(rule);
    VL_JOIN(unite_slice)(parent, runs, &across, z);
}

#undef VL_JOIN_ROWS
#undef VL_JOIN
