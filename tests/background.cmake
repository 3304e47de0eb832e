# src/background and cuda/background (issue 23): MOG2 against OpenCV (G1) and a synthetic cine's truth (G2).
vl_test_exe(background_tool ${CMAKE_CURRENT_LIST_DIR}/background_tool.c)
target_link_options(background_tool PRIVATE -Wl,--as-needed)
add_test(NAME background_oracle_mog2
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/background_oracle_mog2.py $<TARGET_FILE:background_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/background_mog2_work cpu)
set_tests_properties(background_oracle_mog2 PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME background_oracle_mog2_gpu
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/background_oracle_mog2.py $<TARGET_FILE:background_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/background_mog2_gpu_work gpu)
set_tests_properties(background_oracle_mog2_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME background_cli
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/background_cli.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/background_cli_work)
set_tests_properties(background_cli PROPERTIES LABELS "cli" SKIP_RETURN_CODE 77 TIMEOUT 300)

# GPU == CPU: identical masks (label gpu; 77 without a device).
vl_test_exe(background_gpu ${CMAKE_CURRENT_LIST_DIR}/background_gpu.c)
target_link_options(background_gpu PRIVATE -Wl,--as-needed)
add_test(NAME background_gpu COMMAND background_gpu)
set_tests_properties(background_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300)

# A real multi-frame DICOM (MR cine-like, 10 frames; uncompressed, RLE, JPEG-LS) against OpenCV.
add_test(NAME background_realdata
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/background_realdata.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_SHARED_DATA} ${CMAKE_CURRENT_BINARY_DIR}/background_realdata_work)
set_tests_properties(background_realdata PROPERTIES LABELS "realdata" SKIP_RETURN_CODE 77 TIMEOUT 300)
