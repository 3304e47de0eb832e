# src/graphcut and cuda/graphcut (issue 23): max-flow on grid graphs and Boykov-Jolly segmentation.
vl_test_exe(graphcut_tool ${CMAKE_CURRENT_LIST_DIR}/graphcut_tool.c)
target_link_options(graphcut_tool PRIVATE -Wl,--as-needed)

# G3: flow equals PyMaxflow's, labelling energy equals the flow (CPU; the gpu label runs the GPU solver).
add_test(NAME graphcut_oracle_maxflow
         COMMAND ${VL_ORACLE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/graphcut_oracle_maxflow.py $<TARGET_FILE:graphcut_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/graphcut_maxflow_work cpu)
set_tests_properties(graphcut_oracle_maxflow PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME graphcut_oracle_maxflow_gpu
         COMMAND ${VL_ORACLE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/graphcut_oracle_maxflow.py $<TARGET_FILE:graphcut_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/graphcut_maxflow_gpu_work gpu)
set_tests_properties(graphcut_oracle_maxflow_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300)

# G4: voxlabel cut on the phantom's lungs and on a real series' liver (Dice >= 0.95), energy = cut value,
# and the seed refusals.
add_test(NAME graphcut_cut_phantom
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/graphcut_cut_phantom.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/graphcut_cut_phantom_work)
set_tests_properties(graphcut_cut_phantom PROPERTIES LABELS "cli" TIMEOUT 300)
add_test(NAME graphcut_cut_realdata
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/graphcut_cut_realdata.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_SHARED_DATA} ${CMAKE_CURRENT_BINARY_DIR}/graphcut_cut_realdata_work)
set_tests_properties(graphcut_cut_realdata PROPERTIES LABELS "realdata" SKIP_RETURN_CODE 77 TIMEOUT 300)

# GPU == CPU: exact flow, GPU cut energy = flow (label gpu; 77 without a device).
vl_test_exe(graphcut_gpu ${CMAKE_CURRENT_LIST_DIR}/graphcut_gpu.c)
target_link_options(graphcut_gpu PRIVATE -Wl,--as-needed)
add_test(NAME graphcut_gpu COMMAND graphcut_gpu)
set_tests_properties(graphcut_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300)

# Hand-solved graphs, the direction table, capacity limits and refusals, GMM fit, seeds, MOG2 checks.
vl_test_exe(graphcut_unit ${CMAKE_CURRENT_LIST_DIR}/graphcut_unit.c)
add_test(NAME graphcut_unit COMMAND graphcut_unit)
set_tests_properties(graphcut_unit PROPERTIES LABELS "unit")
