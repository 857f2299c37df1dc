# The Debian package (`make deb`, docs/deploy.md): CPack's DEB generator packs what these install
# rules lay out, from the build it runs in. CPack and not dpkg-buildpackage: it packs a build that
# exists in seconds (the release build for `make deb`, the test build for deb_package_test), where
# dpkg-buildpackage would compile the whole tree once more from a debian/ directory of its own.
# The rules install relative to "/" (CPACK_PACKAGING_INSTALL_PREFIX): the package is their only user.
set(SLUICE_DEBIAN_DIR ${PROJECT_SOURCE_DIR}/deploy/debian)

find_program(SLUICE_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(SLUICE_PYTHON3 python3)
if(NOT SLUICE_PYTHON3)
  message(FATAL_ERROR "Missing dependency python3: install the Debian package python3 (tools/install-deps.sh does it)")
endif()

# sluice(8) from docs/sluice.8.md, and /etc/sluice/sluice.yaml from the embedded default (the
# binary prints it; deploy/debian/packaged_config.py moves its relative paths to /var/lib/sluice).
add_custom_command(
  OUTPUT ${SLUICE_GENERATED_DIR}/sluice.8.gz
  COMMAND ${SLUICE_PYTHON3} ${SLUICE_DEBIAN_DIR}/md2man.py ${PROJECT_SOURCE_DIR}/docs/sluice.8.md
          ${SLUICE_GENERATED_DIR}/sluice.8.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/docs/sluice.8.md ${SLUICE_DEBIAN_DIR}/md2man.py
  COMMENT "Man page sluice(8) from docs/sluice.8.md"
  VERBATIM)
add_custom_command(
  OUTPUT ${SLUICE_GENERATED_DIR}/sluice.yaml
  COMMAND ${SLUICE_PYTHON3} ${SLUICE_DEBIAN_DIR}/packaged_config.py $<TARGET_FILE:sluice> ${SLUICE_GENERATED_DIR}/sluice.yaml
  DEPENDS sluice ${SLUICE_DEBIAN_DIR}/packaged_config.py
  COMMENT "The package's /etc/sluice/sluice.yaml"
  VERBATIM)
# The operator's documentation, gzipped as Debian policy asks of files over 4 kB in /usr/share/doc.
set(sluice_docs README.md docs/deploy.md docs/configuration.md docs/live.md docs/hls.md docs/http.md docs/vod.md
    docs/recording.md docs/relays.md docs/cluster.md docs/security.md docs/tls.md docs/srt.md docs/webrtc.md
    docs/proxy_protocol.md docs/access_log.md)
set(sluice_doc_files)
foreach(doc ${sluice_docs})
  get_filename_component(doc_name ${doc} NAME)
  set(gz ${SLUICE_GENERATED_DIR}/doc/${doc_name}.gz)
  add_custom_command(
    OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SLUICE_GENERATED_DIR}/doc
    COMMAND sh -c "gzip -9nc \"$0\" > \"$1\"" ${PROJECT_SOURCE_DIR}/${doc} ${gz}
    DEPENDS ${PROJECT_SOURCE_DIR}/${doc}
    VERBATIM)
  list(APPEND sluice_doc_files ${gz})
endforeach()
add_custom_target(sluice_package_files ALL DEPENDS ${SLUICE_GENERATED_DIR}/sluice.8.gz
                  ${SLUICE_GENERATED_DIR}/sluice.yaml ${sluice_doc_files})

install(TARGETS sluice RUNTIME DESTINATION usr/bin)
install(FILES ${SLUICE_GENERATED_DIR}/sluice.yaml DESTINATION etc/sluice)
install(FILES ${SLUICE_DEBIAN_DIR}/sluice.service DESTINATION usr/lib/systemd/system)
install(DIRECTORY DESTINATION var/lib/sluice/vod)
install(FILES ${SLUICE_GENERATED_DIR}/sluice.8.gz DESTINATION usr/share/man/man8)
install(FILES ${SLUICE_DEBIAN_DIR}/copyright ${SLUICE_GENERATED_DIR}/changelog.gz ${sluice_doc_files}
        DESTINATION usr/share/doc/sluice)

# cpack installs without building `all` first: `make deb` builds before it packs, and the test
# packs a build that is done (the test build's `all` is every test and fuzz target).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY TRUE)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME sluice)
set(CPACK_PACKAGING_INSTALL_PREFIX /)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "streaming media server for RTMP, SRT, WebRTC, HTTP-FLV and HLS")
set(CPACK_PACKAGE_DESCRIPTION "Sluice receives live streams over RTMP, RTMPS, SRT and WebRTC (WHIP) and
serves them to players over RTMP, HTTP-FLV, HLS, SRT and WebRTC (WHEP). It
records streams, plays files, relays to and from other servers and runs as
a cluster with Redis.

The package runs it as the systemd service sluice.service, as the system
user sluice, with /etc/sluice/sluice.yaml.")
set(CPACK_PACKAGE_CONTACT "Sluice maintainers <maintainers@users.noreply.a-seed-e470d91a.example>")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The libraries' packages from the binary (dpkg-shlibdeps), and adduser for the postinst.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS adduser)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${SLUICE_DEBIAN_DIR}/conffiles ${SLUICE_DEBIAN_DIR}/postinst
    ${SLUICE_DEBIAN_DIR}/prerm ${SLUICE_DEBIAN_DIR}/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The version is the binary's (written at build time, not configure time): read when cpack runs.
set(CPACK_SLUICE_DEB_VERSION_FILE ${SLUICE_GENERATED_DIR}/deb_version.cmake)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/SluiceCPackVersion.cmake)
include(CPack)
