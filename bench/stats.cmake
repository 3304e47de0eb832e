# Component statistics benchmark (issue 5 item 7); bench/stats_bench.sh runs it beside the scipy/ITK peers.
vl_bench_exe(stats_bench ${CMAKE_CURRENT_LIST_DIR}/stats_bench.c)
