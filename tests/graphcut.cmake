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
