# src/series (issue 20): vl_series_label, threshold + labels + statistics in one call. The GPU half (device-resident)
# == its CPU reference, exiting 77 without a usable GPU (bench/cohort_device_run.sh runs it, and it under
# compute-sanitizer with --quick, on the GPU machine).
vl_test_exe(series_gpu ${CMAKE_CURRENT_LIST_DIR}/series_gpu.c)
add_test(NAME series_gpu COMMAND series_gpu)
set_tests_properties(series_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)

# The CPU half == the three separate calls, byte for byte; bad ranges refused.
vl_test_exe(series_unit ${CMAKE_CURRENT_LIST_DIR}/series_unit.c)
add_test(NAME series_unit COMMAND series_unit)
set_tests_properties(series_unit PROPERTIES LABELS "unit")
