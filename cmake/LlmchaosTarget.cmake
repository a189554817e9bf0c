# One helper for every target's standard, warnings and sanitizers: no global flags.
function(llmchaos_target_defaults target)
  target_compile_features(${target} PUBLIC cxx_std_20)
  set_target_properties(${target} PROPERTIES CXX_EXTENSIONS OFF)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 at -O2 reports `"literal" + std::string` inside libstdc++ as overlapping memcpy, a known
    # false positive (gcc.gnu.org/PR105329, PR105651) fixed in GCC 13; every other warning stays on.
    # (DEVELOPERS.md, "GCC 12 and coroutines", lists every GCC 12 workaround.)
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(LLMCHAOS_SANITIZE STREQUAL "address")
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
    target_link_options(${target} PUBLIC -fsanitize=address,undefined)
    if(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      # clang 14's -fsanitize=function (part of "undefined") cannot compile C++20 coroutines (the Beast
      # server's co_await sessions): "error: Cannot represent a difference across sections",
      # llvm/llvm-project#49689 / #54153. Every other UBSan check stays on.
      target_compile_options(${target} PRIVATE -fno-sanitize=function)
    endif()
  elseif(LLMCHAOS_SANITIZE STREQUAL "thread")
    # -Wno-tsan: GCC warns that TSan does not model std::atomic_thread_fence, used inside <atomic> by
    # Asio's headers; our own code synchronises with mutexes and atomics, which TSan does model.
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
    target_link_options(${target} PUBLIC -fsanitize=thread)
  endif()
  if(LLMCHAOS_FUZZ)
    # Coverage feedback for libFuzzer from every library, not only the fuzz target's own file.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
endfunction()

# llmchaos_add_library(name): one library per folder, sources globbed from src/ (and extra dirs),
# public headers under include/, namespaced alias llmchaos::name.
function(llmchaos_add_library name)
  cmake_parse_arguments(ARG "" "" "EXTRA_DIRS;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  set(globs ${CMAKE_CURRENT_SOURCE_DIR}/src/*.cpp)
  foreach(dir IN LISTS ARG_EXTRA_DIRS)
    list(APPEND globs ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*.cpp)
  endforeach()
  file(GLOB sources CONFIGURE_DEPENDS ${globs})
  add_library(llmchaos_${name} STATIC ${sources})
  add_library(llmchaos::${name} ALIAS llmchaos_${name})
  target_include_directories(llmchaos_${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                              PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_link_libraries(llmchaos_${name} PUBLIC ${ARG_PUBLIC_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
  llmchaos_target_defaults(llmchaos_${name})
endfunction()

# llmchaos_add_test(name SOURCES... LIBS...): a Catch2 executable registered test by test with CTest.
function(llmchaos_add_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE llmchaos_catch_main ${ARG_LIBS})
  llmchaos_target_defaults(${name})
  # Where the CLI and the sources are, baked in (tests/test_env.hpp reads them; the environment variables
  # LLMCHAOS_BIN / LLMCHAOS_SOURCE_DIR override). A list-valued ENVIRONMENT does not survive
  # catch_discover_tests' PROPERTIES, hence compile definitions.
  target_compile_definitions(${name} PRIVATE LLMCHAOS_TEST_BIN="$<TARGET_FILE:llmchaos>"
                                             LLMCHAOS_TEST_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  # The sanitizers run the CPU-bound tests (explore, shards, every bundled case served) several times
  # slower: explore's background test took 264 s under TSan and over 120 s under ASan's Debug build; the
  # catalog through the gateway at the cases' own time (LLMCHAOS_TEST_SLOWDOWN=10) some 300 s under TSan.
  set(timeout 120)
  if(LLMCHAOS_SANITIZE)
    set(timeout 900)
  endif()
  catch_discover_tests(${name} TEST_PREFIX "${name}: " WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                       PROPERTIES TIMEOUT ${timeout})
endfunction()

# llmchaos_forbid_link(target forbidden...): a configure error when `target` links any `forbidden` target,
# directly or through other targets (LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES, walked transitively),
# so that an arrow pointing upward in the house fails the configure the day a CMakeLists.txt adds it.
function(llmchaos_forbid_link target)
  set(forbidden)
  foreach(name IN LISTS ARGN)
    llmchaos_real_target(${name} real)
    list(APPEND forbidden ${real})
  endforeach()
  llmchaos_real_target(${target} start)
  set(seen)
  set(queue ${start})
  while(queue)
    list(POP_FRONT queue current)
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" current "${current}")
    if(NOT TARGET ${current})
      continue()
    endif()
    llmchaos_real_target(${current} current)
    if(current IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${current})
    if(current IN_LIST forbidden)
      message(FATAL_ERROR "${target} links ${current} (the targets it reaches: ${seen}): that arrow points upward")
    endif()
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(links ${current} ${property})
      if(links)
        list(APPEND queue ${links})
      endif()
    endforeach()
  endwhile()
endfunction()

# The target an alias (llmchaos::x) names, or the name itself.
function(llmchaos_real_target name out)
  get_target_property(real ${name} ALIASED_TARGET)
  if(NOT real)
    set(real ${name})
  endif()
  set(${out} ${real} PARENT_SCOPE)
endfunction()
