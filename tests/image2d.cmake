# src/image2d (issue 6): colour, morphology, per-slice labels, shapes, previews.
vl_test_exe(image2d_hsv_exhaustive ${CMAKE_CURRENT_LIST_DIR}/image2d_hsv_exhaustive.c)
add_test(NAME image2d_hsv_exhaustive_cpu COMMAND image2d_hsv_exhaustive cpu)
add_test(NAME image2d_hsv_exhaustive_gpu COMMAND image2d_hsv_exhaustive gpu)
set_tests_properties(image2d_hsv_exhaustive_cpu PROPERTIES LABELS "unit;oracle")
set_tests_properties(image2d_hsv_exhaustive_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
vl_test_exe(image2d_morph ${CMAKE_CURRENT_LIST_DIR}/image2d_morph.c)
add_test(NAME image2d_morph_cpu COMMAND image2d_morph cpu)
add_test(NAME image2d_morph_gpu COMMAND image2d_morph gpu)
set_tests_properties(image2d_morph_cpu PROPERTIES LABELS "unit;oracle")
set_tests_properties(image2d_morph_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)
vl_test_exe(image2d_tool ${CMAKE_CURRENT_LIST_DIR}/image2d_tool.c)
add_test(NAME image2d_oracle_morph_hsv
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/image2d_oracle_morph.py $<TARGET_FILE:image2d_tool>
                 ${CMAKE_CURRENT_BINARY_DIR}/image2d_morph_work)
add_test(NAME image2d_oracle_shapes
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/image2d_oracle_shapes.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/image2d_shapes_work)
set_tests_properties(image2d_oracle_morph_hsv image2d_oracle_shapes PROPERTIES LABELS "oracle")
add_test(NAME image2d_oracle_order
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/image2d_oracle_order.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/image2d_order_work)
set_tests_properties(image2d_oracle_order PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77)
vl_test_exe(image2d_preview ${CMAKE_CURRENT_LIST_DIR}/image2d_preview.c)
add_test(NAME image2d_preview COMMAND image2d_preview)
set_tests_properties(image2d_preview PROPERTIES LABELS "unit")
add_test(NAME image2d_cli
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/image2d_cli.sh $<TARGET_FILE:voxlabel_cli> ${VL_PYTHON}
                 ${CMAKE_CURRENT_BINARY_DIR}/image2d_cli_work ${VL_SHARED_DATA})
set_tests_properties(image2d_cli PROPERTIES LABELS "cli")

# Preview annotations (issue 16 C17): slice number, orientation letters, scale bar, legend, full-colour edges.
vl_test_exe(image2d_preview_annotate ${CMAKE_CURRENT_LIST_DIR}/image2d_preview_annotate.c)
add_test(NAME image2d_preview_annotate COMMAND image2d_preview_annotate)
set_tests_properties(image2d_preview_annotate PROPERTIES LABELS "unit")

# shapes --matlab against Octave's regionprops (issue 19); skips (77) without octave.
add_test(NAME image2d_oracle_matlab
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/image2d_oracle_matlab.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/image2d_matlab_work)
set_tests_properties(image2d_oracle_matlab PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77)
