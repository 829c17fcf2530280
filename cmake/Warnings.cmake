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
if(PODIUM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()

# GCC 12's flow-sensitive warnings misfire inside libstdc++ and Asio once -O2/-O3 inlines them
# (e.g. GCC bugs 105329 and 105651: -Wrestrict in std::string::insert). The Debug build that
# the test command compiles keeps every warning as an error; optimized builds drop only these.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options($<$<NOT:$<CONFIG:Debug>>:-Wno-restrict> $<$<NOT:$<CONFIG:Debug>>:-Wno-null-dereference>
                      $<$<NOT:$<CONFIG:Debug>>:-Wno-maybe-uninitialized> $<$<NOT:$<CONFIG:Debug>>:-Wno-stringop-overflow>
                      $<$<NOT:$<CONFIG:Debug>>:-Wno-stringop-overread> $<$<NOT:$<CONFIG:Debug>>:-Wno-array-bounds>)
endif()
