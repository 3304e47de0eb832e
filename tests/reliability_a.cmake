# Issue 16, bad inputs (helper A): MAT size bombs and short data, JPEG/PNG bounds and warnings, seg on huge labels,
# writer status on a full disk.
add_test(NAME io_mat_bounds
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_mat_bounds.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_mat_bounds_work)
set_tests_properties(io_mat_bounds PROPERTIES LABELS cli TIMEOUT 300)
add_test(NAME io_seg_huge_label
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/io_seg_huge_label.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/io_seg_huge_label_work)
set_tests_properties(io_seg_huge_label PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME io_image_bounds
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_image_bounds.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_image_bounds_work)
set_tests_properties(io_image_bounds PROPERTIES LABELS cli TIMEOUT 300)
add_test(NAME cli_writers_disk_full
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/cli_writers_disk_full.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_writers_disk_full_work)
set_tests_properties(cli_writers_disk_full PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME cli_seg_mat
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_seg_mat.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/cli_seg_mat_work)
set_tests_properties(cli_seg_mat PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME io_mat73_bounds
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_mat73_bounds.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_mat73_bounds_work)
set_tests_properties(io_mat73_bounds PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)
add_test(NAME dicom_identical_copies
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dicom_identical_copies.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/dicom_identical_copies_work)
set_tests_properties(dicom_identical_copies PROPERTIES LABELS cli TIMEOUT 120)
add_test(NAME dicom_scan_symlinks
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dicom_scan_symlinks.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/dicom_scan_symlinks_work)
set_tests_properties(dicom_scan_symlinks PROPERTIES LABELS cli TIMEOUT 120)
