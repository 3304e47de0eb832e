# A smoke subset of the CLI fuzz campaign (fuzz/cli_campaign.py): 120 mutated runs over every reader with the
# plain build under its memory and time limits; fails on any crash, hang, OOM kill, false success or unclean
# error. The full campaign (5,000 runs, half under ASan+UBSan) is a tool, run by hand (docs/fuzz.md).
add_test(NAME fuzz_cli_smoke
         COMMAND ${VL_PYTHON} ${PROJECT_SOURCE_DIR}/fuzz/cli_campaign.py --voxlabel $<TARGET_FILE:voxlabel_cli>
                 --runs 120 --jobs 2 --seed 7 --work ${CMAKE_CURRENT_BINARY_DIR}/fuzz_cli_smoke_work)
set_tests_properties(fuzz_cli_smoke PROPERTIES LABELS fuzz TIMEOUT 300)
