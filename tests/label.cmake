# CPU labeller: flood-fill oracle (unit) and Octave bwlabeln (oracle).
vl_test_exe(test_label_unit test_label_unit.c)
add_test(NAME label_unit COMMAND test_label_unit)
set_tests_properties(label_unit PROPERTIES LABELS unit)
