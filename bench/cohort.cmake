# voxlabel batch (issue 20): the write stage's compressor, zlib against libdeflate; bench/cohort_bench.sh runs the cohort.
find_library(VL_LIBDEFLATE deflate)
if(VL_LIBDEFLATE)
  vl_bench_exe(cohort_gzip_bench ${CMAKE_CURRENT_LIST_DIR}/cohort_gzip_bench.c)
  target_link_libraries(cohort_gzip_bench PRIVATE ${VL_LIBDEFLATE})
endif()
