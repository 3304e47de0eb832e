# Multilabel labelling of class maps (issue 17): the CPU labeller against a per-class flood-fill oracle
# (unit), against cc3d's multilabel mode and Octave's bwlabeln per class (oracles), z-slabs of class maps
# (label_slabs, in label.cmake), and the GPU against the CPU (label gpu, exit 77 without a device).
vl_test_exe(multilabel_unit ${CMAKE_CURRENT_LIST_DIR}/multilabel_unit.c)
add_test(NAME multilabel_unit COMMAND multilabel_unit)
set_tests_properties(multilabel_unit PROPERTIES LABELS unit)

vl_test_exe(multilabel_tool ${CMAKE_CURRENT_LIST_DIR}/multilabel_tool.c)
add_test(NAME multilabel_cc3d_oracle
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/multilabel_oracle_python.sh ${VL_ORACLE_PYTHON}
                 ${CMAKE_CURRENT_LIST_DIR}/multilabel_cc3d.py $<TARGET_FILE:multilabel_tool>)
set_tests_properties(multilabel_cc3d_oracle PROPERTIES LABELS oracle SKIP_RETURN_CODE 77)

# GPU == CPU on class maps (label gpu; exit 77 without a usable device). Linked with --as-needed so that
# bench/multilabel_device_run.sh runs it on GPU machines without DCMTK.
vl_test_exe(gpu_multilabel_test ${CMAKE_CURRENT_LIST_DIR}/gpu_multilabel_test.c ${CMAKE_CURRENT_LIST_DIR}/label_compare.c)
target_link_options(gpu_multilabel_test PRIVATE -Wl,--as-needed)
add_test(NAME gpu_multilabel_random COMMAND gpu_multilabel_test random)
add_test(NAME gpu_multilabel_large COMMAND gpu_multilabel_test large)
set_tests_properties(gpu_multilabel_random gpu_multilabel_large PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 TIMEOUT 900)

# `matlab` and `size` orders against Octave's bwlabeln run on every class's mask and merged by key.
add_test(NAME multilabel_octave_oracle
         COMMAND ${CMAKE_CURRENT_LIST_DIR}/multilabel_octave.sh $<TARGET_FILE:multilabel_tool> ${CMAKE_CURRENT_LIST_DIR})
set_tests_properties(multilabel_octave_oracle PROPERTIES LABELS oracle SKIP_RETURN_CODE 77)

# `voxlabel label --multilabel` end to end against cc3d and numpy: labels, components.csv, summary.json,
# clean-up options, the cleaned map, a real CT series as HU bands, refusals.
add_test(NAME multilabel_cli
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/multilabel_oracle_python.sh ${VL_ORACLE_PYTHON}
                 ${CMAKE_CURRENT_LIST_DIR}/multilabel_cli.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/multilabel_cli_work ${VL_SHARED_DATA})
set_tests_properties(multilabel_cli PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77 TIMEOUT 300)

# DICOM SEG input: dcmqi's liver SEG against its NRRD, a two-segment SEG, the round trip through
# `voxlabel seg`, overlapping segments and a LABELMAP SEG refused (skips without ../shared).
add_test(NAME multilabel_seg
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/multilabel_seg.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/multilabel_seg_work ${VL_SHARED_DATA})
set_tests_properties(multilabel_seg PROPERTIES LABELS "cli;dicom" SKIP_RETURN_CODE 77 TIMEOUT 300)

# `voxlabel stats --multilabel` (per component of a class map, with its class) against cc3d and numpy, in the
# three orders; the per-class table and label --multilabel's components.csv agree with it; refusals.
add_test(NAME multilabel_stats
         COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/multilabel_oracle_python.sh ${VL_ORACLE_PYTHON}
                 ${CMAKE_CURRENT_LIST_DIR}/multilabel_stats.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/multilabel_stats_work)
set_tests_properties(multilabel_stats PROPERTIES LABELS "cli;oracle" SKIP_RETURN_CODE 77 TIMEOUT 300)
