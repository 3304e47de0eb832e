# src/series (issue 20): the device-resident series (threshold, labels and statistics in one call) on the GPU ==
# its CPU reference; exits 77 without a usable GPU. bench/cohort_device_run.sh runs it, and it under
# compute-sanitizer with --quick, on the GPU machine.
vl_test_exe(series_gpu ${CMAKE_CURRENT_LIST_DIR}/series_gpu.c)
add_test(NAME series_gpu COMMAND series_gpu)
set_tests_properties(series_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
