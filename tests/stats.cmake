# Component statistics (issue 5): unit tests of the CPU reference, CSV/JSON writers, CLI oracles, GPU == CPU.
vl_test_exe(stats_unit ${CMAKE_CURRENT_SOURCE_DIR}/stats_unit.c)
add_test(NAME stats_unit COMMAND stats_unit)
set_tests_properties(stats_unit PROPERTIES LABELS "unit")

# GPU == CPU (bit-identical for integer intensities); exits 77 without a usable GPU.
vl_test_exe(stats_gpu ${CMAKE_CURRENT_SOURCE_DIR}/stats_gpu.c)
add_test(NAME stats_gpu COMMAND stats_gpu)
set_tests_properties(stats_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
