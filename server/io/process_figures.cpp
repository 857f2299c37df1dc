#include "server/io/process_figures.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace sluice::server {

namespace {

double seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; }

std::string read_small_file(const char* path) {
  std::string out;
  FILE* f = std::fopen(path, "re");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  std::fclose(f);
  return out;
}

uint64_t count_open_fds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return 0;
  uint64_t n = 0;
  while (const dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n > 0 ? n - 1 : 0;  // less the descriptor opendir itself holds
}

// Field 22 of /proc/self/stat (clock ticks after boot) plus the boot time of /proc/stat.
double start_time_unix_s() {
  std::string stat = read_small_file("/proc/self/stat");
  size_t paren = stat.rfind(')');  // the command name may hold spaces
  if (paren == std::string::npos) return 0;
  unsigned long long ticks = 0;
  const char* p = stat.c_str() + paren + 1;
  // After ")": field 3 (state) onwards; starttime is field 22, the 20th of those.
  for (int field = 3; field < 22 && *p != '\0'; ++field) {
    p = std::strchr(p + 1, ' ');
    if (p == nullptr) return 0;
  }
  if (std::sscanf(p, " %llu", &ticks) != 1) return 0;
  std::string boot = read_small_file("/proc/stat");
  size_t at = boot.find("\nbtime ");
  if (at == std::string::npos) return 0;
  unsigned long long btime = 0;
  if (std::sscanf(boot.c_str() + at, "\nbtime %llu", &btime) != 1) return 0;
  long hz = sysconf(_SC_CLK_TCK);
  return static_cast<double>(btime) + static_cast<double>(ticks) / static_cast<double>(hz > 0 ? hz : 100);
}

}  // namespace

ProcessFigures process_usage() {
  ProcessFigures f;
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) == 0) f.cpu_seconds = seconds(u.ru_utime) + seconds(u.ru_stime);
  unsigned long long size = 0, resident = 0;
  std::string statm = read_small_file("/proc/self/statm");
  if (std::sscanf(statm.c_str(), "%llu %llu", &size, &resident) == 2) {
    f.resident_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  }
  return f;
}

ProcessFigures process_figures() {
  ProcessFigures f = process_usage();
  f.open_fds = count_open_fds();
  // Read once: it does not change.
  static const double start = start_time_unix_s();
  f.start_time_unix_s = start;
  return f;
}

}  // namespace sluice::server
