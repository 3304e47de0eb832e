# src/filters + src/forest (issue 22): the filter bank against scipy (R1), the forest against scikit-learn
# (R3), tiling and determinism (R4), the model file, the CLI, and GPU == CPU (R2).
vl_test_exe(forest_tool ${CMAKE_CURRENT_LIST_DIR}/forest_tool.c)
add_test(NAME forest_filters_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/forest_filters_oracle.py $<TARGET_FILE:forest_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/forest_filters_work)
set_tests_properties(forest_filters_oracle PROPERTIES LABELS "oracle")
add_test(NAME forest_sklearn_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/forest_sklearn_oracle.py $<TARGET_FILE:voxlabel_cli>
                 $<TARGET_FILE:forest_tool> ${CMAKE_CURRENT_BINARY_DIR}/forest_sklearn_work ${VL_SHARED_DATA})
set_tests_properties(forest_sklearn_oracle PROPERTIES LABELS "oracle;realdata" SKIP_RETURN_CODE 77)
vl_test_exe(forest_unit ${CMAKE_CURRENT_LIST_DIR}/forest_unit.c)
add_test(NAME forest_unit COMMAND forest_unit ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(forest_unit PROPERTIES LABELS "unit")
# GPU == CPU (R2, same seed same forest, streamed training); exits 77 without a usable GPU.
vl_test_exe(forest_gpu ${CMAKE_CURRENT_LIST_DIR}/forest_gpu.c)
add_test(NAME forest_gpu COMMAND forest_gpu)
set_tests_properties(forest_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
add_test(NAME forest_sklearn_export
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/forest_sklearn_export.py $<TARGET_FILE:voxlabel_cli>
                 $<TARGET_FILE:forest_tool> ${CMAKE_CURRENT_BINARY_DIR}/forest_export_work cpu)
set_tests_properties(forest_sklearn_export PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77)
add_test(NAME forest_cli
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/forest_cli.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/forest_cli_work)
set_tests_properties(forest_cli PROPERTIES LABELS "cli")
