/* Internal: atomic output files. A writer gets a temporary path in the target's directory, writes it
 * however it likes (stdio, zlib, libmatio, DCMTK), then commits (rename over the target) or discards.
 * A failure therefore never leaves a partial file, and an existing target is never clobbered unless forced:
 * without force the commit links or renames without replacing (renameat2 RENAME_NOREPLACE, else link), so a
 * target that appeared meanwhile (another run) makes the commit fail. With force only a regular file is
 * replaced: never a device, FIFO, socket, directory or symbolic link (dangling or not).
 * Temporary names are `.<name>.tmp-<pid>-XXXXXX`; they are registered so that SIGINT and SIGTERM remove them
 * (the handler unlinks, then re-raises), and vl_staging_sweep removes those of dead processes. */
#ifndef VL_ATOMIC_FILE_H
#define VL_ATOMIC_FILE_H

#include <stdio.h>

#define VL_PATH_MAX 4096

#include "voxlabel/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vl_atomic_file {
    char path[VL_PATH_MAX];       /* the final name */
    char temp_path[VL_PATH_MAX];  /* an empty file created next to it, mode 0644 */
    int force;                    /* replace an existing regular file at commit */
    int slot;                     /* its entry in the signal-cleanup registry, -1 when none */
} vl_atomic_file;

/* VL_ERR_OUTPUT when `path` exists and !force (a dangling symbolic link counts), exists and is anything but a
 * regular file (even with force), or its directory is missing or not writable. Creates nothing. */
vl_status vl_atomic_file_check(const char *path, int force);
/* Checks as above, then creates the temporary file. */
vl_status vl_atomic_file_begin(vl_atomic_file *file, const char *path, int force);
/* Flushes the temporary file to disk (fsync) and moves it into place: over a regular file with force,
 * otherwise only where no file is (VL_ERR_OUTPUT "appeared meanwhile"). On failure the temporary file is removed. */
vl_status vl_atomic_file_commit(vl_atomic_file *file);
/* Removes the temporary file; safe to call after a failed or successful commit. */
void vl_atomic_file_discard(vl_atomic_file *file);

/* For stdio writers: begin, then open the temporary file with fopen(mode). */
vl_status vl_atomic_file_open_stream(vl_atomic_file *file, const char *path, int force, const char *mode,
                                     FILE **stream);
/* Closes the stream and commits when every write reached the file and `status` is VL_OK; otherwise
 * discards. Returns the first failure. */
vl_status vl_atomic_file_close_stream(vl_atomic_file *file, FILE *stream, vl_status status);

/* The name to show for an output path: the CLI's staged copy `DIR/.staged-<pid>-NAME` is shown as DIR/NAME. */
const char *vl_output_name(const char *path, char *buffer, size_t size);

/* Moves `from` to `to` (same directory) as the commit above does: with !replace it fails with EEXIST when
 * `to` exists, using renameat2(RENAME_NOREPLACE) where the file system has it, else link + unlink.
 * Returns 0 or -1 with errno. */
int vl_rename_noreplace(const char *from, const char *to, int replace);

/* The signal-cleanup registry: paths unlinked (or, for directories, removed when empty) by the SIGINT/SIGTERM handler (installed on the first call, only
 * where the signal's disposition is the default), which then re-raises the signal. Registering returns a slot
 * (-1 when full: the path is then simply not cleaned up); forgetting it is async-signal-safe. */
int vl_staging_register(const char *path);
void vl_staging_forget(int slot);

/* Removes, in `directory`, voxlabel's staging files of processes that no longer exist (kill(pid, 0) fails with
 * ESRCH): names `.<name>.tmp-<pid>-XXXXXX`, `.staged-<pid>-<name>` and the older `..staged-<pid>-<name>.tmp.XXXXXX`.
 * Nothing else is touched; errors are ignored. */
void vl_staging_sweep(const char *directory);

#ifdef __cplusplus
}
#endif
#endif
