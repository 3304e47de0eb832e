# Feature stage bench (issue 21): voxlabel SIFT on CPU or GPU; bench/features_bench.sh and
# bench/features_device_run.sh drive it with OpenCV beside it (bench/features_peers.py).
vl_bench_exe(features_bench ${CMAKE_CURRENT_LIST_DIR}/features_bench.c)
target_link_options(features_bench PRIVATE -Wl,--as-needed)
