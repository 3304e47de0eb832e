#include "status.h"
#include "volume_formats.h"

vl_status vl_mat_read(const char *path, const vl_read_options *options, vl_volume *volume)
{
    (void)options;
    (void)volume;
    return vl_fail(VL_ERR_INPUT, "%s: reading this format is not implemented yet", path);
}

vl_status vl_mat_write(const char *path, const vl_volume *volume, const vl_write_options *options)
{
    (void)volume;
    (void)options;
    return vl_fail(VL_ERR_ARGUMENT, "%s: writing this format is not implemented yet", path);
}
