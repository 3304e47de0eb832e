/* A set of output files that appear together or not at all.
 * The directory is created with its missing parents (mkdir -p) and locked (flock) for the run, so a second
 * voxlabel into it fails at once ("is being written by another voxlabel"); stale staging files of dead runs
 * there are removed. Every target is checked before any work starts (exists without --force, not a regular
 * file, unwritable directory), the writers write hidden staged files `.staged-<pid>-<name>` in the target
 * directory (registered for removal on SIGINT/SIGTERM), and commit moves them all into place, without
 * replacing anything unless --force (a file that appeared meanwhile fails the commit and takes back the ones
 * moved before it). On abort the staged files go, and the directories this run created are removed again
 * when left empty. */
#ifndef VL_CLI_OUTPUTS_H
#define VL_CLI_OUTPUTS_H

#define CLI_MAX_OUTPUTS 8
#define CLI_PATH_SIZE 4096

typedef struct cli_outputs {
    char directory[CLI_PATH_SIZE];
    int created_directory;         /* how many directories, the output one and its parents, this run made */
    int created_length[64];        /* their lengths as prefixes of `directory`, deepest first */
    int force;
    int lock_fd;                   /* the directory, flock'ed; -1 when none */
    int count;
    int slot[CLI_MAX_OUTPUTS];     /* signal-cleanup registry slots of the staged files */
    char final_path[CLI_MAX_OUTPUTS][CLI_PATH_SIZE];
    char staged_path[CLI_MAX_OUTPUTS][CLI_PATH_SIZE];
} cli_outputs;

/* Creates `directory` if missing and checks every name in it; returns 0 or prints the error and returns its exit code. */
int cli_outputs_prepare(cli_outputs *outputs, const char *directory, const char *const *names, int count, int force);
/* The path the writer of output `index` writes to (same file name ending as the target, so formats are detected). */
const char *cli_outputs_staged(const cli_outputs *outputs, int index);
const char *cli_outputs_final(const cli_outputs *outputs, int index);
/* Renames every staged file into place; returns 0 or an exit code after printing the error. */
int cli_outputs_commit(cli_outputs *outputs);
void cli_outputs_abort(cli_outputs *outputs);

#endif
