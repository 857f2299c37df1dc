# Writes a C++ source file that embeds files as byte arrays, for server/http/page.hpp's
# embedded_web_files(). No xxd: file(READ ... HEX) and string(REGEX REPLACE) do the work.
#
#   cmake -DOUTPUT=web_assets.cpp -P embed_assets.cmake -- NAME1 FILE1 [NAME2 FILE2 ...]
#
# Each NAME is what http_page.cpp looks the file up by ("index.html"); the SHA-256 of each file is
# computed here, for its ETag. Run at build time by web/CMakeLists.txt.
cmake_minimum_required(VERSION 3.20)

if(NOT OUTPUT)
  message(FATAL_ERROR "embed_assets.cmake: set -DOUTPUT=<file.cpp>")
endif()

# The arguments after "--": pairs of NAME FILE.
set(args)
set(after_dashes FALSE)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE 0 ${last})
  if(after_dashes)
    list(APPEND args "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_dashes TRUE)
  endif()
endforeach()
list(LENGTH args n)
math(EXPR odd "${n} % 2")
if(n EQUAL 0 OR odd)
  message(FATAL_ERROR "embed_assets.cmake: expected NAME FILE pairs after --, got: ${args}")
endif()

string(REPEAT "[0-9a-f]" 64 line_pattern)
set(arrays "")
set(table "")
set(sources "")
math(EXPR pairs "${n} / 2 - 1")
foreach(k RANGE 0 ${pairs})
  math(EXPR ni "${k} * 2")
  math(EXPR fi "${k} * 2 + 1")
  list(GET args ${ni} name)
  list(GET args ${fi} path)
  if(NOT EXISTS "${path}")
    message(FATAL_ERROR "embed_assets.cmake: ${path} does not exist (for ${name})")
  endif()
  file(SIZE "${path}" size)
  file(SHA256 "${path}" sha)
  file(READ "${path}" hex HEX)
  # 32 bytes (64 hex digits) a line, then each byte as 0xNN,
  string(REGEX REPLACE "(${line_pattern})" "\\1\n" hex "${hex}")
  string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
  # A trailing NUL (not counted in the size) keeps an empty file a valid array.
  string(APPEND arrays "// ${name}: ${size} bytes\nconst unsigned char kFile${k}[] = {\n${bytes}0x00};\n\n")
  string(APPEND table "    {\"${name}\", kFile${k}, ${size}, \"${sha}\"},\n")
  string(APPEND sources "//   ${name} <- ${path}\n")
endforeach()

set(content "// Generated at build time by web/embed_assets.cmake: do not edit. Embeds:\n${sources}\
#include \"server/http/page.hpp\"\n\nnamespace sluice::server {\n\nnamespace {\n\n${arrays}\
const EmbeddedWebFile kFiles[] = {\n${table}};\n\n}  // namespace\n\n\
std::span<const EmbeddedWebFile> embedded_web_files() { return kFiles; }\n\n}  // namespace sluice::server\n")

file(WRITE "${OUTPUT}" "${content}")
