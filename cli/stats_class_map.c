/* `voxlabel stats --multilabel`: the components of every class of a class map, numbered together by
 * vl_label_multilabel (the same numbering as `voxlabel label --multilabel`), replace the map so that the
 * statistics pass measures components; their classes fill the `class` column. */
#include "stats_class_map.h"

#include "cli.h"

int stats_label_class_map(const char *path, vl_volume *map, const vl_label_options *options,
                          vl_label_result *result)
{
    if (vl_class_map_check(map) != VL_OK)
        return cli_error(CLI_EXIT_INPUT, "%s: %s (--multilabel needs a class map)", path, vl_last_error());
    vl_volume labels;
    const vl_status status = vl_label_multilabel(map, &labels, options, result);
    if (status != VL_OK)
        return cli_status_error(status);
    cli_report_device(&result->outcome, "labelled", 1);
    labels.geometry = map->geometry;
    vl_volume_free(map);
    *map = labels;
    return CLI_EXIT_OK;
}
