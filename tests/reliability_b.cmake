# Issue 16, outputs (helper B): full disk, races, --force on non-regular files, staging leftovers, -o parents.
add_test(NAME cli_output_disk_full
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_output_disk_full.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_output_disk_full_work)
set_tests_properties(cli_output_disk_full PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
