# Debian packages (`cpack -G DEB` in the build tree), one per install
# component (cmake/Packaging.cmake, tools/CMakeLists.txt):
#   libmrt0    - component library: libmrt.so.0*; its shlibs file says which
#                package provides libmrt.so.0
#   libmrt-dev - component development: headers, libmrt.so, mrt.pc, the
#                CMake package, share/doc/libmrt (docs, LICENSE, changelog)
#   mrt-tools  - component tools: bin/mrt-* and their man pages
# Each also ships /usr/share/doc/<package>/copyright (the LICENSE) and
# changelog.gz, as Debian expects; those are excluded from a plain
# `cmake --install`, which has them once in share/doc/libmrt.
# tests/bindings/deb builds the packages, unpacks them and builds the C
# example against them.
set(CPACK_PACKAGE_NAME libmrt)
set(CPACK_PACKAGE_VENDOR "the libmrt authors")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(MRT_PACKAGE_MAINTAINER "libmrt maintainers <maintainers@libmrt.invalid>"
  CACHE STRING "The Maintainer field of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${MRT_PACKAGE_MAINTAINER}")

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL library development tools)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
# Dependencies on Debian's packages of the libraries libmrt links
# (dpkg-shlibdeps); between our packages, exact versions.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_DEBIAN_LIBRARY_PACKAGE_NAME libmrt${PROJECT_VERSION_MAJOR})
set(CPACK_COMPONENT_LIBRARY_DESCRIPTION
  "The shared library.\nlibmrt loads compiled models (PopEF), binds them to simulated IPU devices,\nstreams tensors between host and device and serves inference.")
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME libmrt-dev)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION
  "Development files.\nThe C API header mrt_c.h, the C++ wrappers, pkg-config (mrt.pc) and CMake\n(find_package(mrt)) files, and the documentation.")
set(CPACK_COMPONENT_DEVELOPMENT_DEPENDS library)

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME mrt-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION devel)
set(CPACK_COMPONENT_TOOLS_DESCRIPTION
  "Command line tools.\nmrt-gen, mrt-info, mrt-run, mrt-compile, mrt-fuse, mrt-bench and mrt-demo.")
set(CPACK_COMPONENT_TOOLS_DEPENDS library)
# The tools link libmrt.so.0 of the libmrt0 package: dpkg-shlibdeps finds it
# in the build tree and its dependency through CPACK_COMPONENT_TOOLS_DEPENDS.
get_target_property(mrt_library_dir mrt BINARY_DIR)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${mrt_library_dir})

# /usr/share/doc/<package>/{copyright,changelog.gz} for each package.
set(mrt_changelog_gz ${PROJECT_BINARY_DIR}/debian/changelog.gz)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/debian)
file(ARCHIVE_CREATE OUTPUT ${mrt_changelog_gz} PATHS ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  FORMAT raw COMPRESSION GZip MTIME 0)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/CHANGELOG.md)
foreach(component IN LISTS CPACK_COMPONENTS_ALL)
  string(TOUPPER ${component} upper)
  set(doc_dir ${CMAKE_INSTALL_DATAROOTDIR}/doc/${CPACK_DEBIAN_${upper}_PACKAGE_NAME})
  install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${doc_dir} RENAME copyright
    COMPONENT ${component} EXCLUDE_FROM_ALL)
  install(FILES ${mrt_changelog_gz} DESTINATION ${doc_dir} COMPONENT ${component} EXCLUDE_FROM_ALL)
endforeach()

include(CPack)
