# src/label: the CPU labeller against a flood-fill oracle (unit), Octave bwlabeln (oracle) and stored Octave
# results (unit), and the z-slab driver against the whole volume (unit).
vl_test_exe(label_unit ${CMAKE_CURRENT_LIST_DIR}/label_unit.c)
add_test(NAME label_unit COMMAND label_unit)
set_tests_properties(label_unit PROPERTIES LABELS unit)

vl_test_exe(label_oracle_gen ${CMAKE_CURRENT_LIST_DIR}/label_oracle_gen.c)
add_test(NAME label_octave_oracle
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/label_oracle.sh $<TARGET_FILE:label_oracle_gen> ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(label_octave_oracle PROPERTIES LABELS oracle SKIP_RETURN_CODE 77)

vl_test_exe(label_fixed ${CMAKE_CURRENT_LIST_DIR}/label_fixed.c)
add_test(NAME label_fixed_octave_reference COMMAND label_fixed ${PROJECT_SOURCE_DIR}/test-data/bwlabeln)
set_tests_properties(label_fixed_octave_reference PROPERTIES LABELS unit)

vl_test_exe(label_slabs ${CMAKE_CURRENT_LIST_DIR}/label_slabs.c ${CMAKE_CURRENT_LIST_DIR}/label_compare.c)
add_test(NAME label_slabs COMMAND label_slabs)
set_tests_properties(label_slabs PROPERTIES LABELS unit)
