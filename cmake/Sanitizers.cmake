# One switch for the sanitizer presets. Applied globally so that every target,
# including the tests and the static hwsim library, is instrumented alike.
#   address  ASan + UBSan (GCC or clang)
#   thread   TSan
#   fuzzer   ASan + UBSan + libFuzzer's coverage instrumentation (clang only,
#            the fuzz preset): everything is built with fuzzer-no-link, and
#            the fuzz targets alone link libFuzzer (-fsanitize=fuzzer, in
#            fuzz/CMakeLists.txt)
if(MRT_SANITIZER STREQUAL "address")
  set(_mrt_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer)
elseif(MRT_SANITIZER STREQUAL "thread")
  set(_mrt_san_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(MRT_SANITIZER STREQUAL "fuzzer")
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "MRT_SANITIZER=fuzzer needs clang (libFuzzer), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  set(_mrt_san_flags -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer)
elseif(NOT MRT_SANITIZER STREQUAL "")
  message(FATAL_ERROR "MRT_SANITIZER must be '', 'address', 'thread' or 'fuzzer', not '${MRT_SANITIZER}'")
endif()
# Shared libraries are linked with --no-undefined (a missing symbol is a link
# error, not a load error), except in the fuzzer build: clang links its
# sanitizer and coverage runtimes into executables only, so a shared
# library's __asan_*/__sanitizer_cov_* references stay undefined until the
# executable loading it supplies them.
if(MRT_SANITIZER STREQUAL "fuzzer")
  set(MRT_NO_UNDEFINED_LINK_OPTION "")
  # For the same reason a C program linking libmrt.so must bring UBSan's C++
  # runtime (the library's vptr checks), which clang adds only when its C++
  # driver links: C executables are linked by clang++.
  set(CMAKE_C_LINK_EXECUTABLE
      "${CMAKE_CXX_COMPILER} <FLAGS> <CMAKE_C_LINK_FLAGS> <LINK_FLAGS> <OBJECTS> -o <TARGET> <LINK_LIBRARIES>")
else()
  set(MRT_NO_UNDEFINED_LINK_OPTION -Wl,--no-undefined)
endif()
if(_mrt_san_flags)
  add_compile_options(${_mrt_san_flags})
  add_link_options(${_mrt_san_flags})
endif()
