# sd_notify (server/systemd_notify.cpp) through libsystemd, found with pkg-config: the packaged
# unit is Type=notify (docs/deploy.md). Optional, so that a machine without libsystemd-dev still
# builds; tools/install-deps.sh installs it, and `sluice --version` says whether a build has it.
option(SLUICE_SYSTEMD "Tell systemd when Sluice is ready or stopping (sd_notify) when libsystemd is installed" ON)
set(SLUICE_HAVE_LIBSYSTEMD 0)
if(SLUICE_SYSTEMD)
  pkg_check_modules(LIBSYSTEMD IMPORTED_TARGET libsystemd)
  if(LIBSYSTEMD_FOUND)
    set(SLUICE_HAVE_LIBSYSTEMD 1)
    target_link_libraries(sluice_server_core PRIVATE PkgConfig::LIBSYSTEMD)
    message(STATUS "sd_notify: libsystemd ${LIBSYSTEMD_VERSION}")
  else()
    message(STATUS "sd_notify: off (install libsystemd-dev for systemd's Type=notify)")
  endif()
endif()
# Only the one file that calls it needs to know, so a change recompiles only that file.
set_source_files_properties(${PROJECT_SOURCE_DIR}/server/systemd_notify.cpp DIRECTORY ${PROJECT_SOURCE_DIR}/server
                            PROPERTIES COMPILE_DEFINITIONS SLUICE_HAVE_LIBSYSTEMD=${SLUICE_HAVE_LIBSYSTEMD})
