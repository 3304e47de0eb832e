# CPU labeller: flood-fill oracle (unit) and Octave bwlabeln (oracle).
vl_test_exe(test_label_unit test_label_unit.c)
add_test(NAME label_unit COMMAND test_label_unit)
set_tests_properties(label_unit PROPERTIES LABELS unit)

vl_test_exe(label_oracle_gen label_oracle_gen.c)
add_test(NAME label_octave_oracle
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/label_oracle.sh $<TARGET_FILE:label_oracle_gen> ${CMAKE_CURRENT_SOURCE_DIR})
set_tests_properties(label_octave_oracle PROPERTIES LABELS oracle SKIP_RETURN_CODE 77)

vl_test_exe(test_label_fixed test_label_fixed.c)
add_test(NAME label_fixed_octave_reference COMMAND test_label_fixed ${PROJECT_SOURCE_DIR}/test-data/bwlabeln)
set_tests_properties(label_fixed_octave_reference PROPERTIES LABELS unit)

vl_test_exe(test_threshold test_threshold.c)
add_test(NAME threshold_unit COMMAND test_threshold)
set_tests_properties(threshold_unit PROPERTIES LABELS unit)

vl_test_exe(label_slabs_test label_slabs_test.c label_compare.c)
add_test(NAME label_slabs COMMAND label_slabs_test)
set_tests_properties(label_slabs PROPERTIES LABELS unit)
