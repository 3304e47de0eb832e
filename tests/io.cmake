# io/: volume files (NIfTI, NRRD, MHA, raw, MAT) and DICOM SEG.
# The programs io_roundtrip, io_mat and io_fuzz sit where older build trees kept work directories of the same
# names: those directories go, so that the programs can be linked there.
foreach(stale io_roundtrip io_mat io_fuzz)
  if(IS_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${stale})
    file(REMOVE_RECURSE ${CMAKE_CURRENT_BINARY_DIR}/${stale})
  endif()
endforeach()
vl_test_exe(io_roundtrip ${CMAKE_CURRENT_LIST_DIR}/io_roundtrip.c)
add_test(NAME io_roundtrip COMMAND io_roundtrip ${CMAKE_CURRENT_BINARY_DIR}/io_roundtrip_work)
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

vl_test_exe(io_mat ${CMAKE_CURRENT_LIST_DIR}/io_mat.c)
add_test(NAME io_mat COMMAND io_mat ${CMAKE_CURRENT_BINARY_DIR}/io_mat_work)
set_tests_properties(io_mat PROPERTIES LABELS unit)

add_test(NAME io_seg
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/io_seg.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/io_seg)
set_tests_properties(io_seg PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77)
add_test(NAME io_seg_realdata
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/io_seg_realdata.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${VL_SHARED_DATA} ${CMAKE_CURRENT_BINARY_DIR}/io_seg_realdata)
set_tests_properties(io_seg_realdata PROPERTIES LABELS "realdata;oracle" SKIP_RETURN_CODE 77)

vl_test_exe(io_fuzz ${CMAKE_CURRENT_LIST_DIR}/io_fuzz.c)
add_test(NAME io_fuzz COMMAND io_fuzz ${CMAKE_CURRENT_BINARY_DIR}/io_fuzz_work 400)
set_tests_properties(io_fuzz PROPERTIES LABELS fuzz TIMEOUT 300)

# Bad inputs (issue 16): MAT size bombs and short data, JPEG/PNG bounds and warnings, seg on huge labels.
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
add_test(NAME io_mat73_bounds
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_mat73_bounds.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_mat73_bounds_work)
set_tests_properties(io_mat73_bounds PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 300)

# Issue 16 A5/A6: header and --raw-dims size claims through vl_size_product, checked against the bytes present
# (deflate's 1032x bound for gzip NIfTI/NRRD and compressed MHA) before allocating: exit 3; a real allocation
# failure under a 1 GiB address limit: exit 5.
add_test(NAME io_size_claims
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_size_claims.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_size_claims_work)
set_tests_properties(io_size_claims PROPERTIES LABELS cli TIMEOUT 300)

# Issue 16 C17: MAT v7.3 as hdf5storage (Python) writes it, read through HDF5 where libmatio lists nothing.
add_test(NAME io_mat_hdf5storage
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_mat_hdf5storage.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_mat_hdf5storage_work)
set_tests_properties(io_mat_hdf5storage PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)
add_test(NAME io_seg_bad_source
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_seg_bad_source.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_seg_bad_source_work)
set_tests_properties(io_seg_bad_source PROPERTIES LABELS cli SKIP_RETURN_CODE 77 TIMEOUT 120)

# Parallel gzip writer and libdeflate reader: zlib's gzread, Python's gzip/zlib, nibabel and SimpleITK read every
# output; 1 thread and all give the same bytes; zlib's levels through the Python package; foreign and broken
# gzip inputs.
add_test(NAME io_gzip_oracle
         COMMAND sh -c "[ -x \"$1\" ] || { echo \"skipped: no oracle venv (scripts/oracle-venv)\"; exit 77; }; exec \"$@\""
                 oracle ${VL_ORACLE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/io_gzip_oracle.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/io_gzip_oracle)
set_tests_properties(io_gzip_oracle PROPERTIES LABELS "unit;oracle" SKIP_RETURN_CODE 77 TIMEOUT 120
                     ENVIRONMENT "PYTHONPATH=${PROJECT_SOURCE_DIR}/python;VOXLABEL_LIBRARY=$<TARGET_FILE:voxlabel_shared>")
