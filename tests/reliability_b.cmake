# Issue 16, outputs (helper B): full disk, races, --force on non-regular files, staging leftovers, -o parents.
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
