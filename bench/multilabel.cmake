# Multilabel bench (issue 17): the CPU labeller and per-class clean-up against cc3d (bench/multilabel_bench.sh),
# and on the GPU against a CuPy loop and the binary labeller (bench/multilabel_device_run.sh).
vl_bench_exe(multilabel_bench ${CMAKE_CURRENT_LIST_DIR}/multilabel_bench.c)
if(VL_HAVE_CUDA)
  vl_bench_exe(multilabel_gpu_bench ${CMAKE_CURRENT_LIST_DIR}/multilabel_gpu_bench.c)
  target_include_directories(multilabel_gpu_bench PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
  target_link_options(multilabel_gpu_bench PRIVATE -Wl,--as-needed)
endif()
