# src/compare: verdicts and numbering rules of `voxlabel compare` (labels and tables), and Octave round trips.
vl_test_exe(compare_unit ${CMAKE_CURRENT_LIST_DIR}/compare_unit.c)
add_test(NAME compare_unit COMMAND compare_unit ${CMAKE_CURRENT_BINARY_DIR}/compare_unit_work)
set_tests_properties(compare_unit PROPERTIES LABELS unit)

add_test(NAME compare_octave_roundtrip
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/compare_octave_roundtrip.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/compare_octave_roundtrip)
set_tests_properties(compare_octave_roundtrip PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77)
