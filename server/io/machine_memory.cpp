#include "server/io/machine_memory.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace sluice::server {

namespace {

constexpr uint64_t kMiB = 1024 * 1024;

// MemTotal of /proc/meminfo, in bytes; 0 when unreadable.
uint64_t mem_total() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (in >> key >> kib >> unit) {
    if (key == "MemTotal:") return kib * 1024;
  }
  return 0;
}

// A cgroup limit file's value; 0 when absent, "max" or unreadable.
uint64_t limit_file(const char* path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return 0;
  try {
    return std::stoull(text);
  } catch (...) {
    return 0;
  }
}

// The process's own cgroup v2 directory, from /proc/self/cgroup's "0::/path" line.
std::string cgroup_v2_dir() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "/sys/fs/cgroup";
}

uint64_t measure() {
  uint64_t total = mem_total();
  const std::string dir = cgroup_v2_dir();
  for (const std::string& path : {dir + "/memory.max", std::string("/sys/fs/cgroup/memory.max"),
                                  std::string("/sys/fs/cgroup/memory/memory.limit_in_bytes")}) {
    const uint64_t limit = limit_file(path.c_str());
    // v1 reports "no limit" as a huge number: only a limit below the machine's counts.
    if (limit != 0 && (total == 0 || limit < total)) total = limit;
  }
  return total == 0 ? 1024 * kMiB : total;  // unknown: assume a small server
}

}  // namespace

uint64_t machine_memory_bytes() {
  static const uint64_t bytes = measure();
  return bytes;
}

uint64_t reassembly_budget_of(const config::RtmpLimitsConfig& limits) {
  if (limits.reassembly_budget != 0) return limits.reassembly_budget;
  return std::max<uint64_t>(16 * kMiB, machine_memory_bytes() / 16);
}

}  // namespace sluice::server
