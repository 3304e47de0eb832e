#include "cli.h"

int cmd_label(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_error(CLI_EXIT_USAGE, "label: not built yet");
}
