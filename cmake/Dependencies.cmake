# Every third-party dependency comes from a Debian package installed by
# scripts/install-deps.sh; keep the two lists in step.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
find_package(FlatBuffers REQUIRED)
find_package(Eigen3 REQUIRED NO_MODULE)
find_package(nlohmann_json REQUIRED)
find_package(CLI11 REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash)
# oneDNN: hwsim's MatMul kernels above baseline (hwsim/src/codelets/onednn_sgemm.*).
# Debian's runs on GCC's OpenMP runtime, whose thread count hwsim sets per call.
find_package(dnnl CONFIG QUIET)
if(NOT dnnl_FOUND)
  message(FATAL_ERROR "oneDNN (dnnlConfig.cmake) not found: install libdnnl-dev (scripts/install-deps.sh)")
endif()
if(NOT DNNL_CPU_RUNTIME STREQUAL "OMP")
  message(FATAL_ERROR "oneDNN's CPU runtime is '${DNNL_CPU_RUNTIME}'; hwsim needs one built on OpenMP (Debian's libdnnl-dev)")
endif()
find_library(MRT_GOMP_LIBRARY NAMES libgomp.so.1 gomp)
if(NOT MRT_GOMP_LIBRARY)
  message(FATAL_ERROR "libgomp.so.1 (GCC's OpenMP runtime, which oneDNN runs on) not found: install libgomp1")
endif()
# ONNX's CMake package names protobuf::libprotobuf without finding it, so
# Protobuf comes first. Debian's libonnx-dev is built with ONNX_ML=1 (only
# onnx/onnx-ml.pb.h is shipped); its targets onnx and onnx_proto carry that
# definition.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED)
if(MRT_BUILD_TESTS)
  find_package(GTest REQUIRED)
  pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
  pkg_check_modules(LIBFFI REQUIRED IMPORTED_TARGET libffi)
endif()
if(MRT_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()

# mrt_flatbuffers_header(<out_var> <schema.fbs>): generates <name>_generated.h
# next to the build tree and returns its directory in <out_var>.
function(mrt_flatbuffers_header out_dir schema)
  get_filename_component(_name ${schema} NAME_WE)
  set(_dir ${CMAKE_CURRENT_BINARY_DIR}/generated)
  set(_out ${_dir}/${_name}_generated.h)
  add_custom_command(OUTPUT ${_out}
    COMMAND flatbuffers::flatc --cpp --scoped-enums -o ${_dir} ${schema}
    DEPENDS ${schema} flatbuffers::flatc
    COMMENT "flatc ${_name}.fbs")
  add_custom_target(${_name}_fbs DEPENDS ${_out})
  set(${out_dir} ${_dir} PARENT_SCOPE)
endfunction()
