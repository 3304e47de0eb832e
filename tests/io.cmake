# Volume file I/O (NIfTI, NRRD, MHA, raw, MAT), voxlabel compare and DICOM SEG.
vl_test_exe(io_roundtrip_test ${CMAKE_CURRENT_LIST_DIR}/io_roundtrip_test.c)
add_test(NAME io_roundtrip COMMAND io_roundtrip_test ${CMAKE_CURRENT_BINARY_DIR}/io_roundtrip)
set_tests_properties(io_roundtrip PROPERTIES LABELS unit)

vl_test_exe(io_volume_tool ${CMAKE_CURRENT_LIST_DIR}/io_volume_tool.c)
add_test(NAME io_nifti_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_nifti_oracle.py $<TARGET_FILE:io_volume_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_nifti_oracle)
set_tests_properties(io_nifti_oracle PROPERTIES LABELS "unit;oracle")

add_test(NAME io_nrrd_mha_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_nrrd_mha_oracle.py $<TARGET_FILE:io_volume_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_nrrd_mha_oracle)
set_tests_properties(io_nrrd_mha_oracle PROPERTIES LABELS "unit;oracle")

vl_test_exe(io_mat_test ${CMAKE_CURRENT_LIST_DIR}/io_mat_test.c)
add_test(NAME io_mat COMMAND io_mat_test ${CMAKE_CURRENT_BINARY_DIR}/io_mat)
set_tests_properties(io_mat PROPERTIES LABELS unit)

vl_test_exe(compare_unit_test ${CMAKE_CURRENT_LIST_DIR}/compare_unit_test.c)
add_test(NAME compare_unit COMMAND compare_unit_test ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(compare_unit PROPERTIES LABELS unit)

add_test(NAME compare_octave_roundtrip
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/compare_octave_roundtrip.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/compare_octave_roundtrip)
set_tests_properties(compare_octave_roundtrip PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77)

add_test(NAME io_seg
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/io_seg_test.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/io_seg)
set_tests_properties(io_seg PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77)
add_test(NAME io_seg_realdata
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/io_seg_realdata.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${VL_SHARED_DATA} ${CMAKE_CURRENT_BINARY_DIR}/io_seg_realdata)
set_tests_properties(io_seg_realdata PROPERTIES LABELS "realdata;oracle" SKIP_RETURN_CODE 77)

vl_test_exe(io_fuzz_test ${CMAKE_CURRENT_LIST_DIR}/io_fuzz_test.c)
add_test(NAME io_fuzz COMMAND io_fuzz_test ${CMAKE_CURRENT_BINARY_DIR}/io_fuzz 400)
set_tests_properties(io_fuzz PROPERTIES LABELS fuzz TIMEOUT 300)
