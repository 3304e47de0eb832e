# voxlabel batch (issue 20): the write stage's compressor (zlib, its run-length strategy and libdeflate, then the
# parallel writer by thread count), one series' compute and write phases (separate stages against the device-resident
# series); bench/cohort_bench.sh runs the cohort.
vl_bench_exe(cohort_gzip_bench ${CMAKE_CURRENT_LIST_DIR}/cohort_gzip_bench.c)
target_include_directories(cohort_gzip_bench PRIVATE ${PROJECT_SOURCE_DIR}/io) # volume_helpers.h: the writer's memLevel
vl_bench_exe(cohort_series_bench ${CMAKE_CURRENT_LIST_DIR}/cohort_series_bench.c)
# The cohort's read and decode alone, as batch's reader does it: the CPU-seconds under the labelling phase.
vl_bench_exe(cohort_read_bench ${CMAKE_CURRENT_LIST_DIR}/cohort_read_bench.c)
