# The libmrt Python package (bindings_examples/python/libmrt), installed as
# the install component `python` (so `cmake --install` / `make install`
# installs it with everything else) into the prefix's site-packages:
#
#   <prefix>/${MRT_PYTHON_INSTALL_DIR}/libmrt/
#
# MRT_PYTHON_INSTALL_DIR defaults to lib/python3.X/site-packages for the
# Python 3 CMake finds (the layout of `pip install --prefix` and of venvs);
# set it to e.g. lib/python3/dist-packages for a Debian /usr install.
# Users of another prefix add that directory to PYTHONPATH.
# The generated _install_location.py tells the package where libmrt.so is,
# relative to itself, so the install can be moved
# (bindings_examples/python/README.md).
option(MRT_INSTALL_PYTHON "Install the libmrt Python package" ON)
if(NOT MRT_INSTALL_PYTHON)
  return()
endif()
if(NOT MRT_PYTHON_INSTALL_DIR)
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(NOT Python3_FOUND)
    message(STATUS "Python 3 not found: the libmrt Python package is not installed "
                   "(set MRT_PYTHON_INSTALL_DIR to install it anyway)")
    return()
  endif()
  set(MRT_PYTHON_INSTALL_DIR
      "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
      CACHE STRING "Where the libmrt Python package is installed (relative: under the prefix)")
endif()

set(python_package_dir ${MRT_PYTHON_INSTALL_DIR}/libmrt)
if(IS_ABSOLUTE "${MRT_PYTHON_INSTALL_DIR}")
  set(library_dir_from_package ${CMAKE_INSTALL_FULL_LIBDIR})
else()
  # Both relative to the prefix: their relative path holds for any prefix.
  file(RELATIVE_PATH library_dir_from_package /prefix/${python_package_dir}
       /prefix/${CMAKE_INSTALL_LIBDIR})
endif()
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/python/_install_location.py CONTENT
"\"\"\"Written by the libmrt install: where libmrt.so is, from this package.\"\"\"
LIBRARY_DIR_FROM_PACKAGE = \"${library_dir_from_package}\"
")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/bindings_examples/python/libmrt/
  DESTINATION ${python_package_dir} COMPONENT python
  PATTERN __pycache__ EXCLUDE)
install(FILES ${PROJECT_BINARY_DIR}/python/_install_location.py
  DESTINATION ${python_package_dir} COMPONENT python)
