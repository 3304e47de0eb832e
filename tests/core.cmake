# src/core: threshold and the CSV's number format.
vl_test_exe(core_threshold ${CMAKE_CURRENT_LIST_DIR}/core_threshold.c)
add_test(NAME core_threshold COMMAND core_threshold)
set_tests_properties(core_threshold PROPERTIES LABELS unit)

# The CSV's %.12g without printf, against printf on millions of values.
vl_test_exe(core_format_number ${CMAKE_CURRENT_LIST_DIR}/core_format_number.c)
add_test(NAME core_format_number COMMAND core_format_number)
set_tests_properties(core_format_number PROPERTIES LABELS unit)
