# Forest stage benchmark (issue 22): bench/forest_bench.sh here, bench/forest_device_run.sh on the GPU host.
vl_bench_exe(forest_bench ${CMAKE_CURRENT_LIST_DIR}/forest_bench.c)
