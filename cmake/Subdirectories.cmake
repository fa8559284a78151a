# mrt_add_subdirectories(): adds every direct subfolder of the current source
# folder that has a CMakeLists.txt, so a new layer, tool or test folder needs
# no edit of its parent.
function(mrt_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  foreach(child IN LISTS children)
    if(EXISTS ${child}/CMakeLists.txt)
      add_subdirectory(${child})
    endif()
  endforeach()
endfunction()
