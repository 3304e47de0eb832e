/* vl_struct_size (include/voxlabel/struct_sizes.h): the structs a binding passes by pointer. */
#include <string.h>

#include "voxlabel/compare.h"
#include "voxlabel/dicom.h"
#include "voxlabel/io.h"
#include "voxlabel/label.h"
#include "voxlabel/stats.h"
#include "voxlabel/struct_sizes.h"

#define STRUCT(name) {#name, sizeof(name)}

static const struct {
    const char *name;
    size_t size;
} sizes[] = {
    STRUCT(vl_geometry),        STRUCT(vl_volume),          STRUCT(vl_device),
    STRUCT(vl_device_outcome),  STRUCT(vl_progress),        STRUCT(vl_label_options),
    STRUCT(vl_label_result),    STRUCT(vl_stats_options),   STRUCT(vl_csv_options),
    STRUCT(vl_read_options),    STRUCT(vl_write_options),   STRUCT(vl_dicom_read_options),
    STRUCT(vl_dicom_report),    STRUCT(vl_compare_result),  STRUCT(vl_compare_difference),
};

size_t vl_struct_size(const char *type_name)
{
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(sizes[i].name, type_name) == 0)
            return sizes[i].size;
    return 0;
}
