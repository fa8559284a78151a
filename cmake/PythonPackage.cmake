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

# The distribution's metadata (a .dist-info directory, as pip writes), so
# pip and importlib.metadata see the package: `pip show libmrt` works and
# `pip uninstall libmrt` removes what RECORD lists. Name, version and the
# rest come from pyproject.toml, as for a pip install.
file(READ ${PROJECT_SOURCE_DIR}/bindings_examples/python/pyproject.toml pyproject)
foreach(key name version description requires-python)
  string(REGEX MATCH "\n${key} = \"([^\"]*)\"" _ "${pyproject}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "bindings_examples/python/pyproject.toml has no ${key} = \"...\"")
  endif()
  set(python_${key} "${CMAKE_MATCH_1}")
endforeach()
string(REGEX MATCH "\ndependencies = \\[([^]]*)\\]" _ "${pyproject}")
string(REGEX MATCHALL "\"[^\"]+\"" python_dependencies "${CMAKE_MATCH_1}")
string(CONCAT python_metadata "Metadata-Version: 2.1\nName: ${python_name}\nVersion: ${python_version}\n"
       "Summary: ${python_description}\nRequires-Python: ${python_requires-python}\n")
foreach(dependency IN LISTS python_dependencies)
  string(REPLACE "\"" "" dependency "${dependency}")
  string(APPEND python_metadata "Requires-Dist: ${dependency}\n")
endforeach()
set(python_dist_info ${python_name}-${python_version}.dist-info)
set(python_dist_info_dir ${PROJECT_BINARY_DIR}/python/${python_dist_info})
file(WRITE ${python_dist_info_dir}/METADATA "${python_metadata}")
file(WRITE ${python_dist_info_dir}/INSTALLER "cmake\n")
file(WRITE ${python_dist_info_dir}/top_level.txt "libmrt\n")
# RECORD: every installed file, relative to the site-packages directory
# (no hashes: pip needs none to show or uninstall).
file(GLOB python_package_files CONFIGURE_DEPENDS
     RELATIVE ${PROJECT_SOURCE_DIR}/bindings_examples/python
     ${PROJECT_SOURCE_DIR}/bindings_examples/python/libmrt/*)
list(FILTER python_package_files EXCLUDE REGEX "__pycache__")
list(APPEND python_package_files libmrt/_install_location.py)
list(SORT python_package_files)
set(python_record "")
foreach(path IN LISTS python_package_files)
  string(APPEND python_record "${path},,\n")
endforeach()
foreach(path METADATA INSTALLER top_level.txt RECORD)
  string(APPEND python_record "${python_dist_info}/${path},,\n")
endforeach()
file(WRITE ${python_dist_info_dir}/RECORD "${python_record}")
install(DIRECTORY ${python_dist_info_dir}
  DESTINATION ${MRT_PYTHON_INSTALL_DIR} COMPONENT python)
