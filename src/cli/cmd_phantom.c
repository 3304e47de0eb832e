#include "cli.h"

int cmd_phantom(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_error(CLI_EXIT_USAGE, "phantom: not built yet");
}
