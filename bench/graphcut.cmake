# Max-flow and MOG2 benchmark (issue 23); bench/graphcut_bench.sh runs it beside PyMaxflow and OpenCV.
vl_bench_exe(graphcut_bench ${CMAKE_CURRENT_LIST_DIR}/graphcut_bench.c)
target_link_options(graphcut_bench PRIVATE -Wl,--as-needed)
