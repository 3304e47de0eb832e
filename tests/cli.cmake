# cli/: the command line's contract of `voxlabel label` (exit codes, messages, atomic outputs) and its
# --open/--close against scipy.ndimage.
add_test(NAME cli_label COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_label.sh $<TARGET_FILE:voxlabel_cli>)
set_tests_properties(cli_label PROPERTIES LABELS cli)

add_test(NAME cli_label_morphology
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/cli_label_morphology.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_label_morphology_work)
set_tests_properties(cli_label_morphology PROPERTIES LABELS cli TIMEOUT 300)

# Bad inputs and outputs (issue 16): full disks, races, --force on non-regular files, staging leftovers,
# -o parents, one escaped error line per failure, exit codes.
add_test(NAME cli_writers_disk_full
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_writers_disk_full.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_writers_disk_full_work)
set_tests_properties(cli_writers_disk_full PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME cli_seg_mat
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_seg_mat.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_seg_mat_work)
set_tests_properties(cli_seg_mat PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME cli_output_disk_full
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_output_disk_full.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_output_disk_full_work)
set_tests_properties(cli_output_disk_full PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME cli_output_races
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_output_races.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_output_races_work 25)
set_tests_properties(cli_output_races PROPERTIES LABELS cli TIMEOUT 300)
add_test(NAME cli_output_force
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_output_force.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_output_force_work)
set_tests_properties(cli_output_force PROPERTIES LABELS cli TIMEOUT 300)
add_test(NAME cli_output_signals
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_output_signals.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_output_signals_work)
set_tests_properties(cli_output_signals PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME cli_bad_input_messages
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_bad_input_messages.sh $<TARGET_FILE:voxlabel_cli> ${VL_SHARED_DATA})
set_tests_properties(cli_bad_input_messages PROPERTIES LABELS cli)
