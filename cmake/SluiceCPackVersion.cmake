# Read by cpack when it runs (CPACK_PROJECT_CONFIG_FILE, cmake/SluicePackage.cmake): the package
# takes the version the build wrote for the binary (cmake/write_version.cmake), so that
# `sluice --version` and the package's name agree even when configure ran on an older commit.
if(NOT EXISTS "${CPACK_SLUICE_DEB_VERSION_FILE}")
  message(FATAL_ERROR "${CPACK_SLUICE_DEB_VERSION_FILE} is missing: build first (make deb does)")
endif()
include("${CPACK_SLUICE_DEB_VERSION_FILE}")
set(CPACK_PACKAGE_VERSION "${SLUICE_DEB_VERSION}")
set(CPACK_DEBIAN_PACKAGE_VERSION "${SLUICE_DEB_VERSION}")
