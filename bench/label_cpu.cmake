vl_bench_exe(bench_label_cpu ${CMAKE_CURRENT_LIST_DIR}/bench_label_cpu.c)
vl_bench_exe(make_volumes ${CMAKE_CURRENT_LIST_DIR}/make_volumes.c)
