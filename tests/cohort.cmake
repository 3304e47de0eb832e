# voxlabel batch (cli/cmd_batch.c, cli/batch_*.c): cohorts, resume after SIGKILL, shards, the cohort table.
set(VL_COHORT_WORK ${CMAKE_CURRENT_BINARY_DIR}/cohort-work)

# The whole shared DICOM corpus plus a broken series: CT labelled, non-CT skipped with reasons, the broken one a
# failure with its error line; cohort.csv read by pandas with the columns docs/cohorts.md lists.
add_test(NAME cohort_shared_data
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cohort_shared_data.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_SHARED_DATA} ${VL_COHORT_WORK}/shared ${PROJECT_SOURCE_DIR}/docs/cohorts.md)
set_tests_properties(cohort_shared_data PROPERTIES LABELS "realdata;cli" SKIP_RETURN_CODE 77 TIMEOUT 300)

# SIGKILL at several points, then a rerun: byte-identical to an uninterrupted run; option hash rules.
add_test(NAME cohort_resume
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cohort_resume.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_COHORT_WORK}/resume)
set_tests_properties(cohort_resume PROPERTIES LABELS "cli" TIMEOUT 300)

# --shard I/N under GNU parallel + --merge, and --jobs 2: identical to the unsharded run.
add_test(NAME cohort_shards
         COMMAND ${VL_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cohort_shards.py $<TARGET_FILE:voxlabel_cli>
                 ${VL_COHORT_WORK}/shards)
set_tests_properties(cohort_shards PROPERTIES LABELS "cli" TIMEOUT 300)
