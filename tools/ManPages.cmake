# Man pages of the tools, generated from their --help and --version by
# help2man (Debian's help2man; scripts/install-deps.sh installs it) when the
# tools are built, installed to share/man/man1 gzipped. Without help2man,
# when the build's tools cannot run here (cross builds) or in sanitizer builds
# (which are never packaged), there are none: the .deb check
# (tests/bindings/deb) then fails, saying so.
find_program(MRT_HELP2MAN help2man)
if(NOT MRT_HELP2MAN OR CMAKE_CROSSCOMPILING OR NOT MRT_SANITIZER STREQUAL "")
  message(STATUS "help2man not found: the tools get no man pages (scripts/install-deps.sh installs it)")
  return()
endif()

# mrt_man_page(TOOL WHAT) - TOOL.1.gz from the tool's --help and --version;
# WHAT is the one line of the NAME section.
function(mrt_man_page tool what)
  set(page ${CMAKE_CURRENT_BINARY_DIR}/man/${tool}.1)
  add_custom_command(OUTPUT ${page}.gz
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_CURRENT_BINARY_DIR}/man
    COMMAND ${MRT_HELP2MAN} --no-info --no-discard-stderr --section=1
            --name=${what}
            --output=${page} $<TARGET_FILE:${tool}>
    COMMAND gzip -9nf ${page}
    DEPENDS ${tool}
    COMMENT "Generating the man page of ${tool}"
    VERBATIM)
  add_custom_target(${tool}_man_page ALL DEPENDS ${page}.gz)
  install(FILES ${page}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
endfunction()

mrt_man_page(mrt-gen "write libmrt's example PopEF models")
mrt_man_page(mrt-fuse "fuse PopEF models into one executable that serves them all on one IPU")
mrt_man_page(mrt-info "show the blobs, metadata, anchors and programs of PopEF files")
mrt_man_page(mrt-run "serve a PopEF model with libmrt's ModelRunner and report its latency")
mrt_man_page(mrt-compile "compile an ONNX model into a PopEF model for libmrt")
mrt_man_page(mrt-bench "benchmark libmrt's callbacks and queues paths")
mrt_man_page(mrt-demo "tour libmrt's C API on a model")
