# GPU labeller (issue 3): GPU == CPU exactly; 64-bit indexing on a > 2^32-voxel volume. Every test exits
# 77 (skipped) on machines without a usable GPU; the CUDA code still builds wherever nvcc exists.
# gpu_label_test and gpu_large_test link with --as-needed so that they run on GPU machines without DCMTK.
vl_test_exe(gpu_label_test gpu_label_test.c gpu_compare.c label_compare.c)
target_link_options(gpu_label_test PRIVATE -Wl,--as-needed)
add_test(NAME gpu_label_random COMMAND gpu_label_test random)
add_test(NAME gpu_label_design COMMAND gpu_label_test design)
vl_test_exe(gpu_label_dicom gpu_label_dicom.c gpu_compare.c label_compare.c)
add_test(NAME gpu_label_dicom COMMAND gpu_label_dicom ${VL_SHARED_DATA}/dicom/dcmqi_ct_3slice
         ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_study ${VL_SHARED_DATA}/dicom/dcm_qa_ct_ge_tilt
         ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_tilt)
set_tests_properties(gpu_label_random gpu_label_design gpu_label_dicom PROPERTIES
                     LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900)
if(VL_HAVE_CUDA)
  vl_test_exe(gpu_large_test gpu_large_test.cu)
  target_include_directories(gpu_large_test PRIVATE ${PROJECT_SOURCE_DIR}/cuda)
  target_link_options(gpu_large_test PRIVATE -Wl,--as-needed)
  add_test(NAME gpu_label_large COMMAND gpu_large_test)
  add_test(NAME gpu_label_large_slabs COMMAND gpu_large_test slabs)
  set_tests_properties(gpu_label_large gpu_label_large_slabs PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900)
  # Takes nearly all the device memory: run alone.
  vl_test_exe(gpu_memory_test gpu_memory_test.cu label_compare.c)
  target_link_options(gpu_memory_test PRIVATE -Wl,--as-needed)
  add_test(NAME gpu_label_memory_pressure COMMAND gpu_memory_test)
  set_tests_properties(gpu_label_memory_pressure PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endif()
