# cli/: the command line's contract of `voxlabel label` (exit codes, messages, atomic outputs) and its
# --open/--close against scipy.ndimage.
add_test(NAME cli_label COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_label.sh $<TARGET_FILE:voxlabel_cli>)
set_tests_properties(cli_label PROPERTIES LABELS cli)

add_test(NAME cli_label_morphology
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_label_morphology.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_label_morphology_work)
set_tests_properties(cli_label_morphology PROPERTIES LABELS cli TIMEOUT 300)
