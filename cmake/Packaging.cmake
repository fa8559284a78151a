# Installation: the library, its headers, pkg-config file and CMake package.
include(CMakePackageConfigHelpers)

# Install components, one per Debian package (cmake/DebPackages.cmake):
#   library     - the versioned library libmrt.so.0* (libmrt0)
#   development - headers, the libmrt.so link, pkg-config and CMake files,
#                 docs and license in share/doc/libmrt (libmrt-dev)
#   tools       - the command line tools and their man pages (mrt-tools)
# so `cmake --install BUILD --component library` and then
# `--component development` install just what an application builds against.
install(TARGETS mrt EXPORT mrtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT library NAMELINK_COMPONENT development
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/cxx/mrt.hpp ${PROJECT_SOURCE_DIR}/cxx/mrt_graph.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
# The Model Runtime compatibility layer (docs/compat.md): model_runtime/, popef/, poplar/.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/cxx/compat/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
# The documentation, license and changelog.
file(GLOB mrt_doc_pages ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${mrt_doc_pages} ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md
  DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/libmrt COMPONENT development)

# pkg-config: paths relative to the .pc file, so the install can be moved.
file(RELATIVE_PATH pc_to_prefix
  ${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/pkgconfig/mrt.pc.in ${PROJECT_BINARY_DIR}/mrt.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

# CMake package: find_package(mrt CONFIG) gives the target mrt::mrt.
set(cmake_package_dir ${CMAKE_INSTALL_LIBDIR}/cmake/mrt)
install(EXPORT mrtTargets NAMESPACE mrt:: DESTINATION ${cmake_package_dir} COMPONENT development)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mrtConfig.cmake INSTALL_DESTINATION ${cmake_package_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mrtConfig.cmake ${PROJECT_BINARY_DIR}/mrtConfigVersion.cmake
  DESTINATION ${cmake_package_dir} COMPONENT development)

# The libmrt Python package (install component `python`).
include(${PROJECT_SOURCE_DIR}/cmake/PythonPackage.cmake)

include(${CMAKE_CURRENT_LIST_DIR}/DebPackages.cmake)
