# cuda/label, the GPU labeller (issue 3): GPU == CPU exactly; 64-bit indexing on a > 2^32-voxel volume; the
# device policy of src/core/device.c through every CLI stage. Every test exits 77 (skipped) on machines
# without a usable GPU; the CUDA code still builds wherever nvcc exists.
# gpu_label_test, gpu_large_test and gpu_memory_test link with --as-needed so that they run on GPU machines
# without DCMTK (bench/device_run.sh, bench/gpu_device_run.sh call them by these names).
vl_test_exe(gpu_label_test ${CMAKE_CURRENT_LIST_DIR}/gpu_label_test.c ${CMAKE_CURRENT_LIST_DIR}/gpu_compare.c
            ${CMAKE_CURRENT_LIST_DIR}/label_compare.c)
target_link_options(gpu_label_test PRIVATE -Wl,--as-needed)
add_test(NAME gpu_label_random COMMAND gpu_label_test random)
add_test(NAME gpu_label_design COMMAND gpu_label_test design)
vl_test_exe(gpu_label_dicom ${CMAKE_CURRENT_LIST_DIR}/gpu_label_dicom.c ${CMAKE_CURRENT_LIST_DIR}/gpu_compare.c
            ${CMAKE_CURRENT_LIST_DIR}/label_compare.c)
add_test(NAME gpu_label_dicom COMMAND gpu_label_dicom ${VL_SHARED_DATA}/dicom/dcmqi_ct_3slice
         ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_study ${VL_SHARED_DATA}/dicom/dcm_qa_ct_ge_tilt
         ${VL_SHARED_DATA}/dicom/dcm_qa_ct_philips_tilt)
set_tests_properties(gpu_label_random gpu_label_design gpu_label_dicom PROPERTIES
                     LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900)
if(VL_HAVE_CUDA)
  vl_test_exe(gpu_large_test ${CMAKE_CURRENT_LIST_DIR}/gpu_large_test.cu)
  target_link_options(gpu_large_test PRIVATE -Wl,--as-needed)
  add_test(NAME gpu_label_large COMMAND gpu_large_test)
  add_test(NAME gpu_label_large_slabs COMMAND gpu_large_test slabs)
  set_tests_properties(gpu_label_large gpu_label_large_slabs PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900)
  # Takes nearly all the device memory: run alone.
  vl_test_exe(gpu_memory_test ${CMAKE_CURRENT_LIST_DIR}/gpu_memory_test.cu ${CMAKE_CURRENT_LIST_DIR}/label_compare.c)
  target_link_options(gpu_memory_test PRIVATE -Wl,--as-needed)
  add_test(NAME gpu_label_memory_pressure COMMAND gpu_memory_test)
  set_tests_properties(gpu_label_memory_pressure PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900 RUN_SERIAL TRUE)
endif()

# --device gpu:N in every stage of the CLI (label with --open/--close, stats, color, shapes): gpu:1 == cpu with
# two GPUs, and gpu:1 refused with exit 5 by every stage when only one is visible. A plain script, so that
# bench/device_run.sh runs it on GPU machines without CMake.
add_test(NAME gpu_device_selection
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/gpu_device_selection.sh $<TARGET_FILE:voxlabel_cli> ${VL_SHARED_DATA})
set_tests_properties(gpu_device_selection PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 300
                     ENVIRONMENT "VL_PYTHON=${VL_PYTHON}")
