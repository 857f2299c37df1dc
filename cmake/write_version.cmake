# cmake -P script run at every build (cmake/SluiceVersion.cmake). Writes, each only when it changes:
#   version_info.cpp     what `sluice --version` prints
#   deb_version.cmake    the package's version, for CPack (cmake/SluiceCPackVersion.cmake)
#   changelog.gz         the package's one-entry changelog for that version (not changelog.Debian.gz:
#                        the package is native, its packaging the project's own, as lintian sees it)
# The version: the tag (v1.2.3 -> 1.2.3), or after a tag 1.2.3+git<commits>.g<hash>, or with no
# tag yet <project version>~git<commits>.g<hash> (sorts before the release), ".dirty" when tracked
# files differ from HEAD. Outside a git checkout (a tarball): the project version.
set(describe "")
set(deb_version "${FALLBACK_VERSION}")
set(changelog_date "")
find_program(GIT git)
if(GIT AND EXISTS "${SOURCE_DIR}/.git")
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} describe --tags --always --match "v[0-9]*"
                  OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    set(describe "")
  endif()
endif()
if(describe)
  # Not `describe --dirty`: it refreshes the index under its lock, which can fail a commit made
  # beside the build in the same checkout; status without optional locks takes none.
  execute_process(COMMAND ${GIT} --no-optional-locks -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                  OUTPUT_VARIABLE changes ERROR_QUIET)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-list --count HEAD OUTPUT_VARIABLE commits
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} log -1 "--date=format:%a, %d %b %Y %H:%M:%S %z" --format=%cd
                  OUTPUT_VARIABLE changelog_date OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(describe MATCHES "^v([0-9][0-9A-Za-z.+~]*)$")
    set(deb_version "${CMAKE_MATCH_1}")
  elseif(describe MATCHES "^v([0-9][0-9A-Za-z.+~]*)-([0-9]+)-g([0-9a-f]+)$")
    set(deb_version "${CMAKE_MATCH_1}+git${CMAKE_MATCH_2}.g${CMAKE_MATCH_3}")
  else()
    set(deb_version "${FALLBACK_VERSION}~git${commits}.g${describe}")
  endif()
  if(changes)
    string(APPEND describe "-dirty")
    string(APPEND deb_version ".dirty")
  endif()
  set(SLUICE_GIT_DESCRIBE "${describe}")
else()
  set(SLUICE_GIT_DESCRIBE "none (not built from a git checkout)")
endif()
if(NOT changelog_date)
  string(TIMESTAMP changelog_date "%a, %d %b %Y %H:%M:%S +0000" UTC)
endif()
set(SLUICE_DEB_VERSION "${deb_version}")

configure_file(${TEMPLATE} ${OUTPUT_DIR}/version_info.cpp @ONLY)
file(CONFIGURE OUTPUT ${OUTPUT_DIR}/deb_version.cmake CONTENT "set(SLUICE_DEB_VERSION \"${deb_version}\")\n")

# The changelog's date is the commit's, so the same commit gives the same file.
set(changelog "sluice (${deb_version}) unstable; urgency=medium\n\n")
if(describe)
  string(APPEND changelog "  * Built from git ${describe}. The project's history is its git log.\n\n")
else()
  string(APPEND changelog "  * Built outside a git checkout.\n\n")
endif()
string(APPEND changelog " -- Sluice maintainers <maintainers@users.noreply.a-seed-e470d91a.example>  ${changelog_date}\n")
set(changelog_path ${OUTPUT_DIR}/changelog)
set(old "")
if(EXISTS ${changelog_path})
  file(READ ${changelog_path} old)
endif()
if(NOT old STREQUAL changelog OR NOT EXISTS ${changelog_path}.gz)
  file(WRITE ${changelog_path} "${changelog}")
  # -n: no name or time stamp in the gzip header (lintian: package-contains-timestamped-gzip).
  execute_process(COMMAND gzip -9nf -k ${changelog_path} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip of ${changelog_path} failed")
  endif()
endif()
