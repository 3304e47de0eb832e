# Issue 16, helper C: exit codes and error lines for bad inputs (cli/, compare, preview, shapes).
add_test(NAME cli_bad_input_messages
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_bad_input_messages.sh $<TARGET_FILE:voxlabel_cli> ${VL_SHARED_DATA})
set_tests_properties(cli_bad_input_messages PROPERTIES LABELS cli)
