# The libFuzzer targets' committed corpora replayed with the normal toolchain (no clang, no libFuzzer):
# each fuzz_<x>.cpp linked with replay_main.cpp (a plain main feeding every corpus file through
# LLVMFuzzerTestOneInput once) and registered as the CTest test "fuzz_replay: <target>" (label fuzz).
# This is the regression test for the crashing inputs kept in tests/fuzz/corpus/<target>/; under the
# build-asan tree it runs with ASan+UBSan too. Included from tests/CMakeLists.txt.
set(LLMCHAOS_FUZZ_DIR ${CMAKE_CURRENT_LIST_DIR})

function(llmchaos_add_fuzz_replay target)
  add_executable(replay_${target} ${LLMCHAOS_FUZZ_DIR}/${target}.cpp ${LLMCHAOS_FUZZ_DIR}/replay_main.cpp)
  target_link_libraries(replay_${target} PRIVATE ${ARGN})
  llmchaos_target_defaults(replay_${target})
  add_test(NAME "fuzz_replay: ${target}" COMMAND replay_${target} ${LLMCHAOS_FUZZ_DIR}/corpus/${target})
  set_tests_properties("fuzz_replay: ${target}" PROPERTIES LABELS fuzz TIMEOUT 120)
endfunction()

llmchaos_add_fuzz_replay(fuzz_mock_request llmchaos::mockprovider llmchaos::net)
llmchaos_add_fuzz_replay(fuzz_sse llmchaos::client)
llmchaos_add_fuzz_replay(fuzz_error_detail llmchaos::client)
llmchaos_add_fuzz_replay(fuzz_case_loader llmchaos::harness)
target_compile_definitions(replay_fuzz_case_loader PRIVATE
                           LLMCHAOS_FUZZ_CASE_FILE="${PROJECT_SOURCE_DIR}/cases/faults/openai/fuzz.toml")
llmchaos_add_fuzz_replay(fuzz_trace llmchaos::experiments)
llmchaos_add_fuzz_replay(fuzz_cassette llmchaos::proxy)
llmchaos_add_fuzz_replay(fuzz_eventstream llmchaos::core)
