/* voxlabel: progress reporting for long operations.
 * The library calls the callback with a stage name and a fraction in [0,1]; the CLI decides whether and how to draw it. */
#ifndef VOXLABEL_PROGRESS_H
#define VOXLABEL_PROGRESS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*vl_progress_fn)(const char *stage, double fraction, void *user);

typedef struct vl_progress {
    vl_progress_fn callback;  /* NULL: silent */
    void *user;
} vl_progress;

static inline void vl_progress_report(const vl_progress *progress, const char *stage, double fraction)
{
    if (progress && progress->callback)
        progress->callback(stage, fraction, progress->user);
}

#ifdef __cplusplus
}
#endif
#endif
