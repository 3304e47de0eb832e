/* Internal: atomic output files. A writer gets a temporary path in the target's directory, writes it
 * however it likes (stdio, zlib, libmatio, DCMTK), then commits (rename over the target) or discards.
 * A failure therefore never leaves a partial file, and an existing target is never clobbered unless forced. */
#ifndef VL_ATOMIC_FILE_H
#define VL_ATOMIC_FILE_H

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

#ifdef __cplusplus
}
#endif
#endif
