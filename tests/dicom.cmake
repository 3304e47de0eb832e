# io/ DICOM (DCMTK): phantom writer, series reader, discovery, CLI (phantom, info, convert), real data, broken files.
set(VL_DICOM_WORK ${CMAKE_CURRENT_BINARY_DIR}/dicom-work)

vl_test_exe(dicom_roundtrip ${CMAKE_CURRENT_LIST_DIR}/dicom_roundtrip.c)
add_test(NAME dicom_roundtrip COMMAND dicom_roundtrip ${VL_DICOM_WORK})
set_tests_properties(dicom_roundtrip PROPERTIES LABELS "unit")

add_test(NAME dicom_cli_phantom
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/dicom_cli_phantom.sh $<TARGET_FILE:voxlabel_cli> ${VL_DICOM_WORK}/cli-phantom)
set_tests_properties(dicom_cli_phantom PROPERTIES LABELS "cli")

# Real series (../shared/test-data/dicom): geometry vs dcm2niix and ImagePositionPatient, HU vs pydicom,
# compressed variants bit-identical, JPEG 2000 refused, the Philips study's groups.
add_test(NAME dicom_realdata_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dicom_realdata_oracle.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_SHARED_DATA} ${VL_DICOM_WORK}/realdata)
set_tests_properties(dicom_realdata_oracle PROPERTIES LABELS "realdata" SKIP_RETURN_CODE 77 TIMEOUT 600)

vl_test_exe(dicom_rgb ${CMAKE_CURRENT_LIST_DIR}/dicom_rgb.c)
add_test(NAME dicom_rgb COMMAND dicom_rgb ${VL_SHARED_DATA})
set_tests_properties(dicom_rgb PROPERTIES LABELS "realdata" SKIP_RETURN_CODE 77)

# Broken files generated from a phantom series (truncations, corrupt tags, wrong VR, absurd Rows/Columns,
# missing pixel data, mixed dimensions, no DICOM): clean errors, never a crash or a hang.
add_test(NAME dicom_broken_corpus
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dicom_broken_corpus.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_DICOM_WORK}/broken)
set_tests_properties(dicom_broken_corpus PROPERTIES LABELS "cli" TIMEOUT 600)

# Irregular stacks from the phantom (gap, copies, second phase, tilt, variable spacing, one position)
# under each --on-irregular policy; resampling checked exactly on a whole-pixel tilt.
add_test(NAME dicom_irregular
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dicom_irregular.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_DICOM_WORK}/irregular)
set_tests_properties(dicom_irregular PROPERTIES LABELS "cli" TIMEOUT 300)

# Pixel rules: 12-bit signed with garbage high bits, HighBit shift, per-slice fractional rescale, padding.
add_test(NAME dicom_pixel_rules
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dicom_pixel_rules.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_DICOM_WORK}/pixel-rules)
set_tests_properties(dicom_pixel_rules PROPERTIES LABELS "cli" TIMEOUT 300)

# Bad inputs (issue 16): identical copies of one image, symlinked folders in a scan.
add_test(NAME dicom_identical_copies
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dicom_identical_copies.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/dicom_identical_copies_work)
set_tests_properties(dicom_identical_copies PROPERTIES LABELS cli TIMEOUT 120)
add_test(NAME dicom_scan_symlinks
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/dicom_scan_symlinks.sh $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/dicom_scan_symlinks_work)
set_tests_properties(dicom_scan_symlinks PROPERTIES LABELS cli TIMEOUT 120)

# Gantry tilt in ITK (issue 16 C13): the Philips tilted series through label and convert in every format
# with a geometry, read by SimpleITK and nibabel against every slice's ImagePositionPatient; info's z step.
add_test(NAME dicom_tilt_itk
         COMMAND sh -c "[ -x \"$1\" ] || { echo \"skipped: no oracle venv (scripts/oracle-venv)\"; exit 77; }; exec \"$@\""
                 oracle ${VL_ORACLE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/dicom_tilt_itk.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_SHARED_DATA} ${VL_DICOM_WORK}/tilt-itk)
set_tests_properties(dicom_tilt_itk PROPERTIES LABELS "realdata" SKIP_RETURN_CODE 77 TIMEOUT 300)
