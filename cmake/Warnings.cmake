# Warnings are errors for Podium's own code; third-party headers come in as SYSTEM includes.
add_compile_options(-Wall -Wextra -Wpedantic -Werror -Wshadow -Wnon-virtual-dtor
                    -Wold-style-cast -Wcast-align -Woverloaded-virtual -Wnull-dereference
                    -Wimplicit-fallthrough)
if(PODIUM_FUZZ)
  # Every library is instrumented for coverage; only the fuzz targets link libFuzzer's main().
  # clang's warning set differs from GCC's, which the Debug build holds to -Werror: here they
  # are reported but do not stop the fuzz build.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=all -Wno-error)
  add_link_options(-fsanitize=address,undefined)
endif()
if(PODIUM_TSAN)
  # -O1: TSan's own slowdown is 5-15x; unoptimized code on top would double the test time.
  add_compile_options(-fsanitize=thread -O1 -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # TSan does not model std::atomic_thread_fence, which Asio's fenced blocks use around handler
  # invocation (GCC refuses it with -Wtsan). Asio's scheduler hands handlers between threads
  # under its mutex, which TSan does model, so the fences add no ordering it would miss.
  add_compile_definitions(BOOST_ASIO_DISABLE_FENCED_BLOCK)
endif()
if(PODIUM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# GCC 12's flow-sensitive warnings misfire inside libstdc++ and Asio once -O2/-O3 inlines them
# (e.g. GCC bugs 105329 and 105651: -Wrestrict in std::string::insert). The Debug build that
# the test command compiles keeps every warning as an error; optimized builds drop only these.
# The ThreadSanitizer build optimizes (-O1) in its Debug configuration, so it drops them too.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set(_optimizer_false_positives -Wno-restrict -Wno-null-dereference -Wno-maybe-uninitialized
      -Wno-stringop-overflow -Wno-stringop-overread -Wno-array-bounds)
  if(PODIUM_TSAN)
    add_compile_options(${_optimizer_false_positives})
  else()
    foreach(flag ${_optimizer_false_positives})
      add_compile_options($<$<NOT:$<CONFIG:Debug>>:${flag}>)
    endforeach()
  endif()
endif()

# A unity build (CMAKE_UNITY_BUILD, used by scripts/run.sh) includes each .cpp into a combined
# source, so GCC sees a file's anonymous-namespace types as if they came from a header and warns
# that a type with internal linkage is a member of another (-Wsubobject-linkage: the frames of
# the Asio coroutines in engine/client/http_client.cpp). That warning is about headers shared
# between translation units; an included .cpp is not shared.
if(CMAKE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-subobject-linkage)
endif()
