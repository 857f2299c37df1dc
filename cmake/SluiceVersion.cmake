# What `sluice --version` prints (server/version.hpp): the version from git and the build options.
# Git is asked at every build, not only at configure time, so that a new commit or an edit shows
# without a new configure; write_version.cmake rewrites its files only when they change, and only
# the sluice executable compiles the generated file (the libraries and the tests never relink for
# a new version).
set(SLUICE_GENERATED_DIR ${PROJECT_BINARY_DIR}/generated)
if(SLUICE_SANITIZE)
  set(sluice_sanitizers address,undefined)
else()
  set(sluice_sanitizers none)
endif()
if(CMAKE_BUILD_TYPE)
  set(sluice_build_type ${CMAKE_BUILD_TYPE})
else()
  set(sluice_build_type none)
endif()
string(REPLACE "GNU" "gcc" sluice_compiler "${CMAKE_CXX_COMPILER_ID}")
string(TOLOWER "${sluice_compiler}-${CMAKE_CXX_COMPILER_VERSION}" sluice_compiler)
set(sluice_build_options "type=${sluice_build_type} sanitizers=${sluice_sanitizers} compiler=${sluice_compiler}")
foreach(feature LIBSYSTEMD IPSEC_MB)
  if(SLUICE_HAVE_${feature})
    set(sluice_have_${feature} yes)
  else()
    set(sluice_have_${feature} no)
  endif()
endforeach()
string(APPEND sluice_build_options " libsystemd=${sluice_have_LIBSYSTEMD} intel-ipsec-mb=${sluice_have_IPSEC_MB}")

add_custom_target(sluice_version_info
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DOUTPUT_DIR=${SLUICE_GENERATED_DIR}
          -DFALLBACK_VERSION=${PROJECT_VERSION} -DBUILD_OPTIONS=${sluice_build_options}
          -DTEMPLATE=${CMAKE_CURRENT_LIST_DIR}/version_info.cpp.in -P ${CMAKE_CURRENT_LIST_DIR}/write_version.cmake
  BYPRODUCTS ${SLUICE_GENERATED_DIR}/version_info.cpp ${SLUICE_GENERATED_DIR}/deb_version.cmake
             ${SLUICE_GENERATED_DIR}/changelog.gz
  COMMENT "Version from git"
  VERBATIM)
target_sources(sluice PRIVATE ${SLUICE_GENERATED_DIR}/version_info.cpp)
add_dependencies(sluice sluice_version_info)
