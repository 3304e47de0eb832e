# Command-line contract of `voxlabel label` (exit codes, messages, atomic outputs).
add_test(NAME cli_label COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli_label.sh $<TARGET_FILE:voxlabel_cli>)
set_tests_properties(cli_label PROPERTIES LABELS cli)
