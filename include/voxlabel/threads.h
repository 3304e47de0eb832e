/* voxlabel: the process-wide cap on CPU threads.
 * Stages that take a thread count in their options (labelling, statistics, DICOM decoding) use at most that
 * many; the others (thresholding, filters, table and gzip writers) use every core unless this cap says
 * fewer. Like OMP_NUM_THREADS: set it once, before starting work. */
#ifndef VOXLABEL_THREADS_H
#define VOXLABEL_THREADS_H

#ifdef __cplusplus
extern "C" {
#endif

/* At most `threads` CPU threads in any stage; 0 (the default) = all online cores. */
void vl_set_thread_limit(int threads);

#ifdef __cplusplus
}
#endif
#endif
