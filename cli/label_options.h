/* The options that `voxlabel label` and `voxlabel label --multilabel` read alike. */
#ifndef VL_LABEL_OPTIONS_H
#define VL_LABEL_OPTIONS_H

#include "cli_input.h"
#include "voxlabel/io.h"
#include "voxlabel/label.h"

/* Parses `option` with its `value` when it is --conn, --order, --device, --gpu-memory, --threads or --format
 * (--threads caps the input reader and the process too). Returns 1 when it took the option, 0 when the option
 * is another one, -CLI_EXIT_USAGE after printing the usage error for a wrong value. */
int label_parse_shared_option(const char *option, const char *value, vl_label_options *label,
                              cli_input_options *input, vl_file_format *format);

#endif
