#include "server/vod/path.hpp"

#include <array>

namespace sluice::server {

namespace {

constexpr std::array<std::string_view, 6> kExtensions = {"flv", "mp4", "m4v", "m4a", "f4v", "mov"};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

std::string extension_of(std::string_view name) {
  size_t slash = name.rfind('/');
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  return lower(name.substr(dot + 1));
}

bool known_extension(const std::string& ext) {
  for (auto e : kExtensions)
    if (ext == e) return true;
  return false;
}

// Every path segment must be an ordinary name: no empty, "." or ".." segments.
bool safe_segments(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

Result<std::string> vod_relative_path(std::string_view name) {
  if (name.empty() || name.size() > kVodNameHardLimit) return Error(Errc::NotFound, "empty or overlong name");
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    // Backslashes, percent-encoding and control bytes have no business in a media file name; they
    // are how traversal tricks get past naive checks.
    if (u < 0x20 || u == 0x7F || c == '\\' || c == '%') return Error(Errc::NotFound, "forbidden character in name");
  }
  std::string_view rest = name;
  std::string forced_ext;
  if (rest.starts_with("mp4:")) {
    rest.remove_prefix(4);
    forced_ext = "mp4";
  } else if (rest.starts_with("flv:")) {
    rest.remove_prefix(4);
    forced_ext = "flv";
  } else if (rest.starts_with("mp3:")) {
    return Error(Errc::NotFound, "mp3 files are not supported");
  }
  if (rest.empty() || rest.front() == '/') return Error(Errc::NotFound, "absolute or empty path");
  if (!safe_segments(rest)) return Error(Errc::NotFound, "path segments may not be empty, '.' or '..'");
  std::string path(rest);
  std::string ext = extension_of(path);
  if (ext.empty()) {
    path += "." + (forced_ext.empty() ? std::string("flv") : forced_ext);
  } else if (!known_extension(ext)) {
    if (forced_ext.empty()) return Error(Errc::NotFound, "unknown file type ." + ext);
    path += "." + forced_ext;
  }
  return path;
}

VodContainer vod_container_of(std::string_view rel) {
  return extension_of(rel) == "flv" ? VodContainer::Flv : VodContainer::Mp4;
}

Result<std::vector<std::string_view>> confined_components(std::string_view rel) {
  if (rel.empty() || rel.front() == '/') return Error(Errc::NotFound, "absolute or empty path");
  if (rel.find('\0') != std::string_view::npos) return Error(Errc::NotFound, "NUL in path");
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= rel.size()) {
    size_t end = rel.find('/', start);
    if (end == std::string_view::npos) end = rel.size();
    std::string_view seg = rel.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return Error(Errc::NotFound, "empty, '.' or '..' path component");
    if (seg.size() > kMaxComponentBytes) return Error(Errc::NotFound, "path component longer than 255 bytes");
    out.push_back(seg);
    start = end + 1;
  }
  return out;
}

}  // namespace sluice::server
