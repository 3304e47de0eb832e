# GPU labelling benchmark (issue 3 item 7): bench/gpu_device_run.sh runs it beside the CuPy peer and the
# bandwidth floor (bench/gpu_floor.cu); bench/device_run.sh runs that script with every other GPU check.
if(VL_HAVE_CUDA)
  vl_bench_exe(gpu_bench ${CMAKE_CURRENT_LIST_DIR}/gpu_bench.c ${CMAKE_CURRENT_LIST_DIR}/gpu_floor.cu)
  target_include_directories(gpu_bench PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
  target_link_options(gpu_bench PRIVATE -Wl,--as-needed)
endif()
