#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"

static void directory_of(const char *path, char *directory, size_t size)
{
    char copy[VL_PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(directory, size, "%s", dirname(copy));
}

vl_status vl_atomic_file_check(const char *path, int force)
{
    if (strlen(path) + 16 >= VL_PATH_MAX)
        return vl_fail(VL_ERR_OUTPUT, "%s: path is too long", path);
    struct stat info;
    if (stat(path, &info) == 0) {
        if (S_ISDIR(info.st_mode))
            return vl_fail(VL_ERR_OUTPUT, "%s: is a directory", path);
        if (!force)
            return vl_fail(VL_ERR_OUTPUT, "%s: already exists (use --force to replace it)", path);
    }
    char directory[VL_PATH_MAX];
    directory_of(path, directory, sizeof directory);
    if (stat(directory, &info) != 0)
        return vl_fail(VL_ERR_OUTPUT, "%s: directory %s does not exist", path, directory);
    if (!S_ISDIR(info.st_mode))
        return vl_fail(VL_ERR_OUTPUT, "%s: %s is not a directory", path, directory);
    if (access(directory, W_OK | X_OK) != 0)
        return vl_fail(VL_ERR_OUTPUT, "%s: directory %s is not writable", path, directory);
    return VL_OK;
}

vl_status vl_atomic_file_begin(vl_atomic_file *file, const char *path, int force)
{
    memset(file, 0, sizeof *file);
    vl_status status = vl_atomic_file_check(path, force);
    if (status != VL_OK)
        return status;
    snprintf(file->path, sizeof file->path, "%s", path);
    char directory[VL_PATH_MAX], name[VL_PATH_MAX];
    directory_of(path, directory, sizeof directory);
    snprintf(name, sizeof name, "%s", path);
    /* A dot-prefixed temporary keeps half-written files out of globs like *.nii.gz. */
    int written = snprintf(file->temp_path, sizeof file->temp_path, "%s/.%s.tmp.XXXXXX", directory, basename(name));
    if (written < 0 || (size_t)written >= sizeof file->temp_path)
        return vl_fail(VL_ERR_OUTPUT, "%s: path is too long", path);
    int fd = mkstemp(file->temp_path);
    if (fd < 0) {
        int error = errno;
        file->temp_path[0] = '\0';
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create a temporary file: %s", path, strerror(error));
    }
    fchmod(fd, 0644);
    close(fd);
    return VL_OK;
}

vl_status vl_atomic_file_commit(vl_atomic_file *file)
{
    if (rename(file->temp_path, file->path) != 0) {
        int error = errno;
        vl_atomic_file_discard(file);
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot rename the finished file into place: %s", file->path,
                       strerror(error));
    }
    file->temp_path[0] = '\0';
    return VL_OK;
}

void vl_atomic_file_discard(vl_atomic_file *file)
{
    if (file->temp_path[0])
        unlink(file->temp_path);
    file->temp_path[0] = '\0';
}

vl_status vl_atomic_file_open_stream(vl_atomic_file *file, const char *path, int force, const char *mode,
                                     FILE **stream)
{
    *stream = NULL;
    vl_status status = vl_atomic_file_begin(file, path, force);
    if (status != VL_OK)
        return status;
    *stream = fopen(file->temp_path, mode);
    if (!*stream) {
        int error = errno;
        vl_atomic_file_discard(file);
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot open the temporary file: %s", path, strerror(error));
    }
    return VL_OK;
}

vl_status vl_atomic_file_close_stream(vl_atomic_file *file, FILE *stream, vl_status status)
{
    const int failed = ferror(stream) | (fclose(stream) != 0);
    if (status == VL_OK && failed)
        status = vl_fail(VL_ERR_OUTPUT, "%s: write failed (disk full?)", file->path);
    if (status != VL_OK) {
        vl_atomic_file_discard(file);
        return status;
    }
    return vl_atomic_file_commit(file);
}
