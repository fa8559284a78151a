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
if(_mrt_san_flags)
  add_compile_options(${_mrt_san_flags})
  add_link_options(${_mrt_san_flags})
endif()
