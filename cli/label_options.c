#include <string.h>

#include "cli.h"
#include "label_options.h"

int label_parse_shared_option(const char *option, const char *value, vl_label_options *label,
                              cli_input_options *input, vl_file_format *format)
{
    if (strcmp(option, "--conn") == 0) {
        int64_t connectivity;
        if (cli_parse_int64("--conn", value, 1, 26, &connectivity))
            return -CLI_EXIT_USAGE;
        if (!vl_connectivity_is_valid((int)connectivity))
            return -cli_error(CLI_EXIT_USAGE, "--conn: %s is not one of 6, 18, 26 (3D) or 4, 8 (per slice)", value);
        label->connectivity = (int)connectivity;
    } else if (strcmp(option, "--order") == 0) {
        if (vl_label_order_parse(value, &label->order) != VL_OK)
            return -cli_error(CLI_EXIT_USAGE, "%s", vl_last_error());
    } else if (strcmp(option, "--device") == 0) {
        if (cli_parse_device(value, &label->device))
            return -CLI_EXIT_USAGE;
    } else if (strcmp(option, "--gpu-memory") == 0) {
        if (cli_parse_bytes("--gpu-memory", value, &label->device.gpu_memory))
            return -CLI_EXIT_USAGE;
    } else if (strcmp(option, "--threads") == 0) {
        if (cli_parse_threads(value, &label->threads))
            return -CLI_EXIT_USAGE;
        input->threads = label->threads;
    } else if (strcmp(option, "--format") == 0) {
        if (vl_file_format_parse(value, format) != VL_OK)
            return -cli_error(CLI_EXIT_USAGE, "--format: '%s' is not one of nii.gz, nii, nrrd, mha, mat, raw", value);
    } else {
        return 0;
    }
    return 1;
}
