# One switch for the sanitizer presets. Applied globally so that every target,
# including the tests and the static hwsim library, is instrumented alike.
if(MRT_SANITIZER STREQUAL "address")
  set(_mrt_san_flags -fsanitize=address,undefined -fno-sanitize-recover=undefined
                     -fno-omit-frame-pointer)
elseif(MRT_SANITIZER STREQUAL "thread")
  set(_mrt_san_flags -fsanitize=thread -fno-omit-frame-pointer)
elseif(NOT MRT_SANITIZER STREQUAL "")
  message(FATAL_ERROR "MRT_SANITIZER must be '', 'address' or 'thread', not '${MRT_SANITIZER}'")
endif()
if(_mrt_san_flags)
  add_compile_options(${_mrt_san_flags})
  add_link_options(${_mrt_san_flags})
endif()
