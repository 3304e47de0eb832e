# 2D stages bench (issue 6): CPU always, GPU when the CUDA backend is built; bench/stages2d_bench.sh drives them.
vl_bench_exe(stages2d_bench_cpu ${CMAKE_CURRENT_LIST_DIR}/stages2d_bench.c)
if(VL_HAVE_CUDA)
  vl_bench_exe(stages2d_bench_gpu ${CMAKE_CURRENT_LIST_DIR}/stages2d_bench.cu)
  target_include_directories(stages2d_bench_gpu PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
endif()
