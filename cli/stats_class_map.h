/* `voxlabel stats --multilabel`: a class map's components as the table's rows (cli/stats_class_map.c). */
#ifndef VL_STATS_CLASS_MAP_H
#define VL_STATS_CLASS_MAP_H

#include "voxlabel/label.h"
#include "voxlabel/volume.h"

/* Labels every class of the class map `map` (read from `path`) at once under `options` and replaces it by
 * the labels (u32, same geometry); result->classes gives each component's class. Returns the exit code
 * (an input error names `path`), printing the one error line on failure. */
int stats_label_class_map(const char *path, vl_volume *map, const vl_label_options *options,
                          vl_label_result *result);

#endif
