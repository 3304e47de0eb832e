# src/stats (issue 5): unit tests of the CPU reference and the CSV/JSON writers, CLI oracles, GPU == CPU.
vl_test_exe(stats_unit ${CMAKE_CURRENT_LIST_DIR}/stats_unit.c)
add_test(NAME stats_unit COMMAND stats_unit)
set_tests_properties(stats_unit PROPERTIES LABELS "unit")

# GPU == CPU (bit-identical for integer intensities); exits 77 without a usable GPU.
vl_test_exe(stats_gpu ${CMAKE_CURRENT_LIST_DIR}/stats_gpu.c)
add_test(NAME stats_gpu COMMAND stats_gpu)
set_tests_properties(stats_gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77)

# Oracles: scipy.ndimage + numpy always; ITK's label-map statistics when ITK is installed (Debian
# libinsighttoolkit5-dev, scripts/deps/stats.txt); Octave regionprops when octave is on PATH.
find_package(ITK 5 QUIET COMPONENTS ITKLabelMap ITKIONIFTI ITKIOImageBase)
set(VL_STATS_ORACLE_ARGS)
if(ITK_FOUND)
  add_executable(stats_itk_oracle ${CMAKE_CURRENT_LIST_DIR}/stats_itk_oracle.cxx)
  target_include_directories(stats_itk_oracle PRIVATE ${ITK_INCLUDE_DIRS})
  target_link_libraries(stats_itk_oracle PRIVATE ${ITK_LIBRARIES})
  list(APPEND VL_STATS_ORACLE_ARGS --itk $<TARGET_FILE:stats_itk_oracle>)
else()
  message(STATUS "voxlabel: ITK not found, stats_oracle runs without the ITK comparison")
endif()
find_program(VL_OCTAVE octave)
if(VL_OCTAVE)
  list(APPEND VL_STATS_ORACLE_ARGS --octave)
endif()
add_test(NAME stats_oracle
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/stats_oracle.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/stats_oracle ${VL_STATS_ORACLE_ARGS})
set_tests_properties(stats_oracle PROPERTIES LABELS "oracle")

add_test(NAME stats_cli
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/stats_cli.py $<TARGET_FILE:voxlabel_cli> ${CMAKE_CURRENT_BINARY_DIR}/stats_cli)
set_tests_properties(stats_cli PROPERTIES LABELS "cli")

# Issue 19: exact hull, Feret, oriented box, Euler numbers, ITK-derived columns, analytic surfaces.
vl_test_exe(stats_geometry_unit ${CMAKE_CURRENT_LIST_DIR}/stats_geometry_unit.c)
add_test(NAME stats_geometry_unit COMMAND stats_geometry_unit)
set_tests_properties(stats_geometry_unit PROPERTIES LABELS "unit")

# SimpleITK shape statistics, qhull, skimage and scipy.stats against the issue-19 columns (oracle venv).
add_test(NAME stats_shape_oracle
         COMMAND ${VL_ORACLE_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/stats_shape_oracle.py $<TARGET_FILE:voxlabel_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/stats_shape_oracle)
set_tests_properties(stats_shape_oracle PROPERTIES LABELS "oracle" SKIP_RETURN_CODE 77)
