#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "voxlabel/atomic_file.h"
#include "cli.h"
#include "cli_outputs.h"

int cli_outputs_prepare(cli_outputs *outputs, const char *directory, const char *const *names, int count, int force)
{
    memset(outputs, 0, sizeof *outputs);
    if (count > CLI_MAX_OUTPUTS || strlen(directory) + 64 >= CLI_PATH_SIZE)
        return cli_error(CLI_EXIT_OUTPUT, "%s: output path is too long", directory);
    snprintf(outputs->directory, sizeof outputs->directory, "%s", directory);
    struct stat info;
    if (stat(directory, &info) != 0) {
        if (mkdir(directory, 0755) != 0)
            return cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the output directory: %s", directory,
                             strerror(errno));
        outputs->created_directory = 1;
    } else if (!S_ISDIR(info.st_mode)) {
        return cli_error(CLI_EXIT_OUTPUT, "%s: exists and is not a directory", directory);
    }
    for (int i = 0; i < count; i++) {
        snprintf(outputs->final_path[i], CLI_PATH_SIZE, "%s/%s", directory, names[i]);
        snprintf(outputs->staged_path[i], CLI_PATH_SIZE, "%s/.staged-%ld-%s", directory, (long)getpid(), names[i]);
        vl_status status = vl_atomic_file_check(outputs->final_path[i], force);
        if (status != VL_OK) {
            cli_outputs_abort(outputs);
            return cli_status_error(status);
        }
    }
    outputs->count = count;
    return 0;
}

const char *cli_outputs_staged(const cli_outputs *outputs, int index)
{
    return outputs->staged_path[index];
}

const char *cli_outputs_final(const cli_outputs *outputs, int index)
{
    return outputs->final_path[index];
}

int cli_outputs_commit(cli_outputs *outputs)
{
    for (int i = 0; i < outputs->count; i++)
        if (rename(outputs->staged_path[i], outputs->final_path[i]) != 0) {
            int error = errno;
            cli_outputs_abort(outputs);
            return cli_error(CLI_EXIT_OUTPUT, "%s: cannot move the finished file into place: %s",
                             outputs->final_path[i], strerror(error));
        }
    outputs->count = 0;
    return 0;
}

void cli_outputs_abort(cli_outputs *outputs)
{
    for (int i = 0; i < outputs->count; i++)
        unlink(outputs->staged_path[i]);
    outputs->count = 0;
    if (outputs->created_directory)
        rmdir(outputs->directory); /* only succeeds when empty */
}
