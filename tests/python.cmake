# python/voxlabel (issue 18): the package over libvoxlabel.so, run by Debian's python3 with the source tree's
# package and the freshly built library. pytest + hypothesis properties against scipy and numpy
# (python_label), Octave bwlabeln (python_octave), the whole-array labels for Dask (python_dask), scipy,
# the CLI's CSV, nibabel, scipy.io and pydicom (python_stats_io), cc3d (python_cc3d, oracle venv), the
# installer (python_install), and on a GPU CuPy arrays against the CPU (python_gpu) and Dask on CuPy chunks
# against the whole array (python_dask_gpu), label gpu.
set(VL_PYTHON_ENV PYTHONPATH=${PROJECT_SOURCE_DIR}/python VOXLABEL_LIBRARY=$<TARGET_FILE:voxlabel_shared>
                  VOXLABEL_CLI=$<TARGET_FILE:voxlabel_cli> VOXLABEL_SHARED_DATA=${VL_SHARED_DATA}
                  PYTHONDONTWRITEBYTECODE=1)
set(VL_PYTEST ${VL_PYTHON} -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning)

foreach(name label dask stats_io)
  add_test(NAME python_${name} COMMAND ${VL_PYTEST} ${CMAKE_CURRENT_LIST_DIR}/python_${name}.py)
  set_tests_properties(python_${name} PROPERTIES LABELS "python;unit" ENVIRONMENT "${VL_PYTHON_ENV}")
endforeach()

add_test(NAME python_octave COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/python_octave.py)
set_tests_properties(python_octave PROPERTIES LABELS "python;oracle" ENVIRONMENT "${VL_PYTHON_ENV}"
                                              SKIP_RETURN_CODE 77)

add_test(NAME python_cc3d COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/python_cc3d.py ${VL_ORACLE_PYTHON})
set_tests_properties(python_cc3d PROPERTIES LABELS "python;oracle" ENVIRONMENT "${VL_PYTHON_ENV}"
                                            SKIP_RETURN_CODE 77)

add_test(NAME python_install COMMAND ${CMAKE_CURRENT_LIST_DIR}/python_install.sh ${PROJECT_SOURCE_DIR}
                                     ${PROJECT_BINARY_DIR})
set_tests_properties(python_install PROPERTIES LABELS "python;unit")

add_test(NAME python_gpu COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/python_gpu.py)
set_tests_properties(python_gpu PROPERTIES LABELS "python;gpu" ENVIRONMENT "${VL_PYTHON_ENV}" SKIP_RETURN_CODE 77)

add_test(NAME python_dask_gpu COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_LIST_DIR}/python_dask_gpu.py)
set_tests_properties(python_dask_gpu PROPERTIES LABELS "python;gpu" ENVIRONMENT "${VL_PYTHON_ENV}"
                                                SKIP_RETURN_CODE 77)
