#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* flock */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "voxlabel/atomic_file.h"
#include "cli.h"
#include "cli_outputs.h"

/* mkdir -p: creates `directory` and its missing parents, recording each one made so that abort removes them. */
static int make_directories(cli_outputs *outputs, int attempt)
{
    char path[CLI_PATH_SIZE]; /* the name as given is kept for messages: trailing slashes go only here */
    snprintf(path, sizeof path, "%s", outputs->directory);
    size_t length = strlen(path);
    while (length > 1 && path[length - 1] == '/')
        path[--length] = '\0';
    /* The missing prefixes, from the deepest up. */
    int missing[64], count = 0;
    size_t end = length;
    for (;;) {
        char saved = path[end];
        path[end] = '\0';
        struct stat info;
        const int exists = stat(path, &info) == 0;
        const int error = errno;
        path[end] = saved;
        if (exists)
            break;
        if (error != ENOENT)
            return cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the output directory: %s", path, strerror(error));
        if (count == 64)
            return cli_error(CLI_EXIT_OUTPUT, "%s: more than 64 missing parent directories", path);
        missing[count++] = (int)end;
        while (end > 0 && path[end - 1] != '/')
            end--;
        while (end > 1 && path[end - 1] == '/')
            end--;
        if (end == 0 || (end == 1 && path[0] == '/'))
            break;
    }
    for (int i = count - 1; i >= 0; i--) {
        char saved = path[missing[i]];
        path[missing[i]] = '\0';
        const int made = mkdir(path, 0755) == 0;
        const int error = errno;
        if (made) {
            /* deepest first in created_length, as abort removes them */
            memmove(outputs->created_length + 1, outputs->created_length,
                    sizeof outputs->created_length[0] * (size_t)outputs->created_directory);
            outputs->created_length[0] = missing[i];
            outputs->created_directory++;
        }
        path[missing[i]] = saved;
        if (!made && error == ENOENT && attempt < 8)
            /* A parent made by another run went again (that run failed): start over, a few times. */
            return make_directories(outputs, attempt + 1);
        if (!made && error != EEXIST) /* EEXIST: another run made it meanwhile, which is fine */
            return cli_error(CLI_EXIT_OUTPUT, "%s: cannot create the output directory: %s", path, strerror(error));
    }
    return 0;
}

/* Removes the empty directories this run made, deepest first. The output directory itself goes only while
 * this run holds its lock: otherwise another run that found it may be writing there. */
static void remove_created_directories(cli_outputs *outputs)
{
    const int own_output = outputs->lock_fd >= 0;
    size_t length = strlen(outputs->directory);
    while (length > 1 && outputs->directory[length - 1] == '/')
        length--;
    for (int i = 0; i < outputs->created_directory; i++) {
        if (i == 0 && !own_output && outputs->created_length[0] == (int)length)
            continue;
        char saved = outputs->directory[outputs->created_length[i]];
        outputs->directory[outputs->created_length[i]] = '\0';
        rmdir(outputs->directory); /* only succeeds when empty */
        outputs->directory[outputs->created_length[i]] = saved;
    }
    outputs->created_directory = 0;
}

/* The PID of a live voxlabel staging into `directory` (from its `.staged-<pid>-` files), 0 when none is seen. */
static long writer_pid(const char *directory)
{
    DIR *dir = opendir(directory);
    if (!dir)
        return 0;
    long pid = 0;
    struct dirent *entry;
    while (!pid && (entry = readdir(dir))) {
        const char *name = entry->d_name;
        if (strncmp(name, ".staged-", 8) != 0)
            continue;
        long candidate = strtol(name + 8, NULL, 10);
        if (candidate > 0 && candidate != (long)getpid() && kill((pid_t)candidate, 0) == 0)
            pid = candidate;
    }
    closedir(dir);
    return pid;
}

static int lock_directory(cli_outputs *outputs)
{
    outputs->lock_fd = open(outputs->directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (outputs->lock_fd < 0)
        return cli_error(CLI_EXIT_OUTPUT, "%s: cannot open the output directory: %s", outputs->directory,
                         strerror(errno));
    if (flock(outputs->lock_fd, LOCK_EX | LOCK_NB) == 0)
        return 0;
    const int error = errno;
    if (error != EWOULDBLOCK && error != EINTR) {
        /* No flock here (some network file systems): the commit still never replaces without --force. */
        close(outputs->lock_fd);
        outputs->lock_fd = -1;
        return 0;
    }
    close(outputs->lock_fd);
    outputs->lock_fd = -1;
    long pid = writer_pid(outputs->directory);
    char who[64] = "";
    if (pid)
        snprintf(who, sizeof who, " (pid %ld)", pid);
    return cli_error(CLI_EXIT_OUTPUT, "%s: is being written by another voxlabel%s; wait for it or choose another -o",
                     outputs->directory, who);
}

static void unlock_directory(cli_outputs *outputs)
{
    if (outputs->lock_fd >= 0)
        close(outputs->lock_fd); /* releases the flock */
    outputs->lock_fd = -1;
}

static void forget_staged(cli_outputs *outputs)
{
    for (int i = 0; i < outputs->count; i++) {
        vl_staging_forget(outputs->slot[i]);
        outputs->slot[i] = -1;
    }
}

int cli_outputs_prepare(cli_outputs *outputs, const char *directory, const char *const *names, int count, int force)
{
    memset(outputs, 0, sizeof *outputs);
    outputs->lock_fd = -1;
    for (int i = 0; i < CLI_MAX_OUTPUTS; i++)
        outputs->slot[i] = -1;
    if (count > CLI_MAX_OUTPUTS || strlen(directory) + 64 >= CLI_PATH_SIZE)
        return cli_error(CLI_EXIT_OUTPUT, "%s: output path is too long", directory);
    snprintf(outputs->directory, sizeof outputs->directory, "%s", directory);
    outputs->force = force;
    struct stat info;
    if (stat(outputs->directory, &info) != 0) {
        int code = make_directories(outputs, 0);
        if (code) {
            remove_created_directories(outputs);
            return code;
        }
        if (stat(outputs->directory, &info) != 0 || !S_ISDIR(info.st_mode))
            return cli_error(CLI_EXIT_OUTPUT, "%s: the output directory vanished while it was being created",
                             directory);
    } else if (!S_ISDIR(info.st_mode)) {
        return cli_error(CLI_EXIT_OUTPUT, "%s: exists and is not a directory", directory);
    }
    int code = lock_directory(outputs);
    if (code)
        return code; /* the directory is another run's now: leave it */
    vl_staging_sweep(outputs->directory);
    for (int i = 0; i < count; i++) {
        snprintf(outputs->final_path[i], CLI_PATH_SIZE, "%s/%s", outputs->directory, names[i]);
        snprintf(outputs->staged_path[i], CLI_PATH_SIZE, "%s/.staged-%ld-%s", outputs->directory, (long)getpid(),
                 names[i]);
        vl_status status = vl_atomic_file_check(outputs->final_path[i], force);
        if (status != VL_OK) {
            cli_outputs_abort(outputs);
            return cli_status_error(status);
        }
    }
    /* The directories first, then the files in them: the handler removes files, then empty directories. */
    for (int i = 0; i < outputs->created_directory; i++) {
        char saved = outputs->directory[outputs->created_length[outputs->created_directory - 1 - i]];
        outputs->directory[outputs->created_length[outputs->created_directory - 1 - i]] = '\0';
        vl_staging_register(outputs->directory); /* never forgotten: harmless once the directory holds outputs */
        outputs->directory[outputs->created_length[outputs->created_directory - 1 - i]] = saved;
    }
    for (int i = 0; i < count; i++)
        outputs->slot[i] = vl_staging_register(outputs->staged_path[i]);
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
        if (vl_rename_noreplace(outputs->staged_path[i], outputs->final_path[i], outputs->force) != 0) {
            int error = errno;
            /* Without --force the ones already moved were new files of this run: take them back. */
            for (int j = 0; j < i && !outputs->force; j++)
                unlink(outputs->final_path[j]);
            cli_outputs_abort(outputs);
            if (error == EEXIST)
                return cli_error(CLI_EXIT_OUTPUT, "%s: appeared meanwhile (another program wrote it); nothing "
                                 "replaced (use --force to replace it)", outputs->final_path[i]);
            return cli_error(CLI_EXIT_OUTPUT, "%s: cannot move the finished file into place: %s",
                             outputs->final_path[i], strerror(error));
        }
    forget_staged(outputs);
    outputs->count = 0;
    unlock_directory(outputs);
    return 0;
}

void cli_outputs_abort(cli_outputs *outputs)
{
    for (int i = 0; i < outputs->count; i++)
        unlink(outputs->staged_path[i]);
    forget_staged(outputs);
    outputs->count = 0;
    remove_created_directories(outputs); /* while still holding the lock */
    unlock_directory(outputs);
}
