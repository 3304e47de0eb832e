#define _GNU_SOURCE /* renameat2 (glibc 2.28+) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "voxlabel/atomic_file.h"
#include "voxlabel/error.h"

static void directory_of(const char *path, char *directory, size_t size)
{
    char copy[VL_PATH_MAX];
    snprintf(copy, sizeof copy, "%s", path);
    snprintf(directory, size, "%s", dirname(copy));
}

/* ---- the signal-cleanup registry ---------------------------------------------------------------------------- */

enum { STAGING_SLOTS = 64 };
static char staging_path[STAGING_SLOTS][VL_PATH_MAX];
static int staging_claimed[STAGING_SLOTS];                /* taken by a thread (atomic) */
static volatile sig_atomic_t staging_live[STAGING_SLOTS]; /* the handler unlinks these */
static pthread_once_t staging_once = PTHREAD_ONCE_INIT;

static void staging_handler(int signal_number)
{
    const int saved = errno;
    for (int i = 0; i < STAGING_SLOTS; i++)
        if (staging_live[i])
            unlink(staging_path[i]);
    /* Directories a run created (registered before the files in them) go when left empty. */
    for (int i = STAGING_SLOTS - 1; i >= 0; i--)
        if (staging_live[i])
            rmdir(staging_path[i]);
    errno = saved;
    /* SA_RESETHAND restored the default action; the re-raised signal is delivered when this returns. */
    raise(signal_number);
}

static void staging_install(void)
{
    const int signals[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction old;
        if (sigaction(signals[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* ignored, or someone else's handler: leave it */
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = staging_handler;
        sigemptyset(&action.sa_mask);
        sigaddset(&action.sa_mask, SIGINT);
        sigaddset(&action.sa_mask, SIGTERM);
        action.sa_flags = SA_RESETHAND;
        sigaction(signals[i], &action, NULL);
    }
}

int vl_staging_register(const char *path)
{
    pthread_once(&staging_once, staging_install);
    if (strlen(path) >= VL_PATH_MAX)
        return -1;
    for (int i = 0; i < STAGING_SLOTS; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&staging_claimed[i], &expected, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            memcpy(staging_path[i], path, strlen(path) + 1);
            __atomic_thread_fence(__ATOMIC_SEQ_CST);
            staging_live[i] = 1;
            return i;
        }
    }
    return -1;
}

void vl_staging_forget(int slot)
{
    if (slot < 0 || slot >= STAGING_SLOTS)
        return;
    staging_live[slot] = 0;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&staging_claimed[slot], 0, __ATOMIC_RELEASE);
}

/* ---- stale staging files ------------------------------------------------------------------------------------ */

/* The PID in one of voxlabel's staging names, or 0 when `name` is not one. */
static long staging_pid(const char *name)
{
    const char *p = NULL;
    if (strncmp(name, ".staged-", 8) == 0)
        p = name + 8;
    else if (strncmp(name, "..staged-", 9) == 0)
        p = name + 9;
    if (!p && name[0] == '.') {
        /* .<name>.tmp-<pid>-XXXXXX */
        const size_t length = strlen(name);
        if (length < 1 + 1 + 5 + 1 + 1 + 6 || name[length - 7] != '-')
            return 0;
        const char *tmp = NULL;
        for (const char *q = strstr(name, ".tmp-"); q; q = strstr(q + 1, ".tmp-"))
            tmp = q;
        if (!tmp || tmp == name)
            return 0;
        p = tmp + 5;
        const char *end = name + length - 7;
        if (p >= end)
            return 0;
        for (const char *q = p; q < end; q++)
            if (*q < '0' || *q > '9')
                return 0;
        return strtol(p, NULL, 10);
    }
    if (!p || *p < '1' || *p > '9')
        return 0;
    char *end;
    long pid = strtol(p, &end, 10);
    return *end == '-' && end[1] ? pid : 0;
}

/* A process that can still write: it exists and is not a zombie (killed, not yet reaped by its parent). */
static int process_writes(long pid)
{
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    char path[64], line[256] = "";
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *file = fopen(path, "r");
    if (!file)
        return 1;
    const size_t got = fread(line, 1, sizeof line - 1, file);
    fclose(file);
    line[got] = '\0';
    const char *state = strrchr(line, ')'); /* "pid (comm) S ...": the name may hold spaces and parentheses */
    return !(state && state[1] == ' ' && state[2] == 'Z');
}

void vl_staging_sweep(const char *directory)
{
    /* Once per directory and process is enough. */
    static __thread char last[VL_PATH_MAX];
    if (strcmp(last, directory) == 0)
        return;
    snprintf(last, sizeof last, "%s", directory);
    DIR *dir = opendir(directory);
    if (!dir)
        return;
    const long self = (long)getpid();
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        long pid = staging_pid(entry->d_name);
        if (pid <= 0 || pid == self || pid > 0x7fffffffL)
            continue;
        if (process_writes(pid))
            continue;
        struct stat info;
        if (fstatat(dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode))
            unlinkat(dirfd(dir), entry->d_name, 0);
    }
    closedir(dir);
}

/* ---- checks and commits ------------------------------------------------------------------------------------- */

/* Messages name the file the user asked for, not the CLI's staged copy `.staged-<pid>-<name>`. */
const char *vl_output_name(const char *path, char *buffer, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *name = slash ? slash + 1 : path;
    if (strncmp(name, ".staged-", 8) != 0)
        return path;
    const char *dash = strchr(name + 8, '-');
    if (!dash || !dash[1])
        return path;
    snprintf(buffer, size, "%.*s%s", (int)(name - path), path, dash + 1);
    return buffer;
}

vl_status vl_atomic_file_check(const char *path, int force)
{
    char buffer[VL_PATH_MAX];
    const char *name = vl_output_name(path, buffer, sizeof buffer);
    if (strlen(path) + 40 >= VL_PATH_MAX)
        return vl_fail(VL_ERR_OUTPUT, "%s: path is too long", name);
    struct stat info;
    if (lstat(path, &info) == 0) {
        struct stat target;
        const int linked = S_ISLNK(info.st_mode);
        const int resolves = !linked || stat(path, &target) == 0;
        if (linked && resolves)
            info = target;
        if (resolves && S_ISDIR(info.st_mode))
            return vl_fail(VL_ERR_OUTPUT, "%s: is a directory", name);
        if (!force)
            return vl_fail(VL_ERR_OUTPUT, "%s: already exists%s (use --force to replace it)", name,
                           linked && !resolves ? " as a dangling symbolic link" : "");
        if (linked)
            return vl_fail(VL_ERR_OUTPUT, "%s: is a symbolic link; --force replaces only regular files (remove the "
                                          "link, or give the path it points to)", name);
        if (!S_ISREG(info.st_mode))
            return vl_fail(VL_ERR_OUTPUT, "%s: is not a regular file (a device, FIFO or socket); --force replaces "
                                          "only regular files", name);
    }
    char directory[VL_PATH_MAX];
    directory_of(path, directory, sizeof directory);
    if (stat(directory, &info) != 0)
        return vl_fail(VL_ERR_OUTPUT, "%s: directory %s does not exist", name, directory);
    if (!S_ISDIR(info.st_mode))
        return vl_fail(VL_ERR_OUTPUT, "%s: %s is not a directory", name, directory);
    if (access(directory, W_OK | X_OK) != 0)
        return vl_fail(VL_ERR_OUTPUT, "%s: directory %s is not writable", name, directory);
    return VL_OK;
}

vl_status vl_atomic_file_begin(vl_atomic_file *file, const char *path, int force)
{
    memset(file, 0, sizeof *file);
    file->slot = -1;
    vl_status status = vl_atomic_file_check(path, force);
    if (status != VL_OK)
        return status;
    snprintf(file->path, sizeof file->path, "%s", path);
    file->force = force;
    char directory[VL_PATH_MAX], name[VL_PATH_MAX], buffer[VL_PATH_MAX];
    directory_of(path, directory, sizeof directory);
    vl_staging_sweep(directory);
    snprintf(name, sizeof name, "%s", path);
    /* A dot-prefixed temporary keeps half-written files out of globs like *.nii.gz; the PID lets a later run
     * tell a dead process's leftovers from a live one's. */
    int written = snprintf(file->temp_path, sizeof file->temp_path, "%s/.%s.tmp-%ld-XXXXXX", directory,
                           basename(name), (long)getpid());
    if (written < 0 || (size_t)written >= sizeof file->temp_path)
        return vl_fail(VL_ERR_OUTPUT, "%s: path is too long", vl_output_name(path, buffer, sizeof buffer));
    int fd = mkstemp(file->temp_path);
    if (fd < 0) {
        int error = errno;
        file->temp_path[0] = '\0';
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot create a temporary file: %s", vl_output_name(path, buffer, sizeof buffer),
                       strerror(error));
    }
    file->slot = vl_staging_register(file->temp_path);
    fchmod(fd, 0644);
    close(fd);
    return VL_OK;
}

int vl_rename_noreplace(const char *from, const char *to, int replace)
{
    if (replace)
        return rename(from, to);
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP)
        return -1;
#endif
    if (link(from, to) == 0) {
        unlink(from);
        return 0;
    }
    if (errno == EEXIST)
        return -1;
    if (errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP && errno != EMLINK && errno != ENOSYS)
        return -1;
    /* No hard links here (FAT, some FUSE): claim the name exclusively, then rename over the claim. */
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return -1;
    close(fd);
    if (rename(from, to) == 0)
        return 0;
    const int error = errno;
    unlink(to);
    errno = error;
    return -1;
}

vl_status vl_atomic_file_commit(vl_atomic_file *file)
{
    char buffer[VL_PATH_MAX];
    const char *name = vl_output_name(file->path, buffer, sizeof buffer);
    /* Data first, then the name: a crash after the commit never leaves a renamed empty file. */
    int fd = open(file->temp_path, O_RDONLY);
    if (fd >= 0) {
        const int synced = fsync(fd) == 0 || errno == EINVAL || errno == EROFS || errno == ENOTSUP;
        const int error = errno;
        close(fd);
        if (!synced) {
            vl_atomic_file_discard(file);
            return vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", name, strerror(error));
        }
    }
    if (file->force) {
        struct stat info;
        if (lstat(file->path, &info) == 0 && !S_ISREG(info.st_mode)) {
            vl_atomic_file_discard(file);
            return vl_fail(VL_ERR_OUTPUT, "%s: is no longer a regular file; --force replaces only regular files",
                           name);
        }
    }
    if (vl_rename_noreplace(file->temp_path, file->path, file->force) != 0) {
        int error = errno;
        vl_atomic_file_discard(file);
        if (error == EEXIST)
            return vl_fail(VL_ERR_OUTPUT, "%s: appeared meanwhile (another program or voxlabel run wrote it); "
                                          "nothing replaced (use --force to replace it)", name);
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot rename the finished file into place: %s", name, strerror(error));
    }
    vl_staging_forget(file->slot);
    file->slot = -1;
    file->temp_path[0] = '\0';
    return VL_OK;
}

void vl_atomic_file_discard(vl_atomic_file *file)
{
    if (file->temp_path[0])
        unlink(file->temp_path);
    vl_staging_forget(file->slot);
    file->slot = -1;
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
        char buffer[VL_PATH_MAX];
        return vl_fail(VL_ERR_OUTPUT, "%s: cannot open the temporary file: %s", vl_output_name(path, buffer, sizeof buffer),
                       strerror(error));
    }
    return VL_OK;
}

vl_status vl_atomic_file_close_stream(vl_atomic_file *file, FILE *stream, vl_status status)
{
    errno = 0;
    int failed = fflush(stream) != 0 || ferror(stream);
    int error = failed ? errno : 0;
    struct statvfs space;
    /* An earlier short write's errno is gone by now; a file system without room tells the likely cause. */
    if (failed && !error && fstatvfs(fileno(stream), &space) == 0 && space.f_bavail == 0)
        error = ENOSPC;
    if (fclose(stream) != 0 && !failed) {
        failed = 1;
        error = errno;
    }
    if (status == VL_OK && failed) {
        char buffer[VL_PATH_MAX];
        status = vl_fail(VL_ERR_OUTPUT, "%s: write failed: %s", vl_output_name(file->path, buffer, sizeof buffer),
                         error ? strerror(error) : "disk full or I/O error");
    }
    if (status != VL_OK) {
        vl_atomic_file_discard(file);
        return status;
    }
    return vl_atomic_file_commit(file);
}
