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

# `--order size-raster` against ITK ConnectedComponentImageFilter + RelabelComponentImageFilter (conn 6
# and 26; ITK has no 18), byte for byte, on random volumes with many size ties and on the real CT series
# (noted and left out when ../shared is absent); also checks that `size` differs from ITK on ties.
# Needs ITK (Debian libinsighttoolkit5-dev, scripts/deps/stats.txt); not built without it.
find_package(ITK 5 QUIET COMPONENTS ITKConnectedComponents ITKImageSources ITKCommon)
if(ITK_FOUND)
  vl_test_exe(label_itk_order ${CMAKE_CURRENT_LIST_DIR}/label_itk_order.cxx)
  target_include_directories(label_itk_order PRIVATE ${ITK_INCLUDE_DIRS})
  target_link_libraries(label_itk_order PRIVATE ${ITK_LIBRARIES})
  add_test(NAME label_itk_order
           COMMAND label_itk_order ${VL_SHARED_DATA}/dicom/dcmqi_ct_3slice ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_study
                   ${VL_SHARED_DATA}/dicom/dcm_qa_ct_ge_tilt ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_tilt)
  set_tests_properties(label_itk_order PROPERTIES LABELS oracle)
else()
  message(STATUS "voxlabel: ITK not found, label_itk_order is not built")
endif()
