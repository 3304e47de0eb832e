/* Internal: atomic output files. A writer gets a temporary path in the target's directory, writes it
 * however it likes (stdio, zlib, libmatio, DCMTK), then commits (rename over the target) or discards.
 * A failure therefore never leaves a partial file, and an existing target is never clobbered unless forced. */
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
} vl_atomic_file;

/* VL_ERR_OUTPUT when `path` exists and !force, or its directory is missing or not writable. Creates nothing. */
vl_status vl_atomic_file_check(const char *path, int force);
/* Checks as above, then creates the temporary file. */
vl_status vl_atomic_file_begin(vl_atomic_file *file, const char *path, int force);
/* Renames the temporary file over the target. On failure the temporary file is removed. */
vl_status vl_atomic_file_commit(vl_atomic_file *file);
/* Removes the temporary file; safe to call after a failed or successful commit. */
void vl_atomic_file_discard(vl_atomic_file *file);

/* For stdio writers: begin, then open the temporary file with fopen(mode). */
vl_status vl_atomic_file_open_stream(vl_atomic_file *file, const char *path, int force, const char *mode,
                                     FILE **stream);
/* Closes the stream and commits when every write reached the file and `status` is VL_OK; otherwise
 * discards. Returns the first failure. */
vl_status vl_atomic_file_close_stream(vl_atomic_file *file, FILE *stream, vl_status status);

#ifdef __cplusplus
}
#endif
#endif
