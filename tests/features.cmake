# src/features (issue 21): SIFT per slice, descriptor matching, RANSAC, the features/match/register-slices
# commands. OpenCV (Debian's python3-opencv) is the oracle; the GPU test compares with the CPU reference.
vl_test_exe(features_tool ${CMAKE_CURRENT_LIST_DIR}/features_tool.c)
add_test(NAME features_oracle_opencv
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/features_oracle.py $<TARGET_FILE:features_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/features_oracle_work ${VL_SHARED_DATA} detect)
add_test(NAME features_oracle_ransac
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/features_oracle.py $<TARGET_FILE:features_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/features_ransac_work ${VL_SHARED_DATA} ransac)
set_tests_properties(features_oracle_opencv features_oracle_ransac PROPERTIES LABELS "oracle;realdata"
                     SKIP_RETURN_CODE 77)
# GPU == CPU (F1 pyramid, keypoints, descriptors, matches); links --as-needed to run on machines without DCMTK
# (bench/features_device_run.sh runs it there, under compute-sanitizer too).
vl_test_exe(features_gpu ${CMAKE_CURRENT_LIST_DIR}/features_gpu.c)
target_link_options(features_gpu PRIVATE -Wl,--as-needed)
add_test(NAME features_gpu COMMAND features_gpu)
set_tests_properties(features_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
add_test(NAME features_cli
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/features_cli.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/features_cli_work)
set_tests_properties(features_cli PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77)
