#define _POSIX_C_SOURCE 200809L
/* The read and decode of a cohort alone, as voxlabel batch's reader does it: the folder is scanned
 * (vl_dicom_scan_path), then every CT series of at least 3 slices (not colour, localizer or derived) is read with
 * vl_dicom_read_series_files on every core, one after the other, each into the block the previous one was read
 * into (vl_dicom_read_options.reuse). Prints the wall and CPU seconds (user + system, of the whole process) of
 * the scan and of the reads: the CPU-seconds the batch's labelling phase cannot do without.
 * usage: cohort_read_bench ROOT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "voxlabel/dicom.h"
#include "bench_clock.h"

static void cpu_seconds(double *user, double *system)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    *user = (double)usage.ru_utime.tv_sec + (double)usage.ru_utime.tv_usec * 1e-6;
    *system = (double)usage.ru_stime.tv_sec + (double)usage.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: cohort_read_bench ROOT\n");
        return 2;
    }
    double user0, system0, user1, system1, user2, system2;
    cpu_seconds(&user0, &system0);
    const double start = now();
    vl_dicom_scan scan;
    if (vl_dicom_scan_path(argv[1], NULL, &scan) != VL_OK) {
        fprintf(stderr, "cohort_read_bench: %s\n", vl_last_error());
        return 3;
    }
    const double scanned = now();
    cpu_seconds(&user1, &system1);
    vl_dicom_read_options options;
    vl_dicom_read_options_default(&options);
    options.on_irregular = VL_IRREGULAR_WARN;
    int series = 0, failed = 0;
    double voxels = 0;
    for (size_t s = 0; s < scan.series_count; s++) {
        const vl_dicom_series_info *info = &scan.series[s];
        if (info->is_colour || info->is_localizer || info->is_derived || strcmp(info->modality, "CT") != 0 ||
            info->slice_count < 3)
            continue;
        vl_volume ct;
        if (vl_dicom_read_series_files((const char *const *)info->paths, info->path_count, argv[1], &options, &ct,
                                       NULL) != VL_OK) {
            failed++;
            continue;
        }
        series++;
        voxels += (double)vl_volume_voxels(&ct);
        if (ct.data != options.reuse) { /* a larger block from now on */
            free(options.reuse);
            options.reuse = ct.data;
            options.reuse_bytes = (size_t)vl_volume_voxels(&ct) * vl_dtype_size(ct.dtype);
        }
    }
    const double read = now() - scanned;
    cpu_seconds(&user2, &system2);
    free(options.reuse);
    const size_t found = scan.series_count;
    vl_dicom_scan_free(&scan);
    printf("scan: %zu series in %.3f s wall, cpu %.2f+%.2f s\n", found, scanned - start,
           user1 - user0, system1 - system0);
    printf("read+decode: %d series (%d failed), %.0f Mvoxels in %.3f s wall, cpu %.2f+%.2f s (%.2f cores busy)\n",
           series, failed, voxels / 1e6, read, user2 - user1, system2 - system1,
           (user2 - user1 + system2 - system1) / read);
    return 0;
}
