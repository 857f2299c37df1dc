// server/access_log/access_log.hpp: the process-wide writer. Lines appended to a file of mode
// 0640, reopened by name after a rename (logrotate), switched to another file or format or off at
// run time, whole lines while threads write and the configuration changes, and a file that
// cannot be opened costs lines, not the process.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "server/access_log/access_log.hpp"

using namespace sluice;
using namespace sluice::server;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/sluice-access-log-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() {
    configure_access_log({});  // off: nothing holds the files
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

AccessRecord request(const std::string& target) {
  AccessRecord r;
  r.client = "127.0.0.1";
  r.method = "GET";
  r.target = target;
  r.protocol = "HTTP/1.1";
  r.status = 200;
  r.bytes_out = 10;
  return r;
}

config::AccessLogConfig to(const fs::path& p, config::AccessLogFormat f = config::AccessLogFormat::Combined) {
  return config::AccessLogConfig{p.string(), f};
}

}  // namespace

TEST_CASE("lines appended to a 0640 file; reopened by name after a rename") {
  TempDir dir;
  const fs::path log = dir.path / "access.log";
  ::umask(022);
  configure_access_log(to(log));
  REQUIRE(access_log_enabled());
  write_access_record(request("/one"));
  struct stat st {};
  REQUIRE(::stat(log.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0640);
  auto lines = lines_of(log);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].starts_with("127.0.0.1 - - ["));
  CHECK(lines[0].find("] \"GET /one HTTP/1.1\" 200 10 \"-\" \"-\" 0.000") != std::string::npos);

  // logrotate: the file is renamed, lines still go to it until the reopen.
  const fs::path rotated = dir.path / "access.log.1";
  fs::rename(log, rotated);
  write_access_record(request("/two"));
  reopen_access_log();
  write_access_record(request("/three"));
  lines = lines_of(rotated);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].find("/two") != std::string::npos);
  lines = lines_of(log);
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("/three") != std::string::npos);

  // An existing file is appended to, not truncated.
  configure_access_log({});
  configure_access_log(to(log));
  write_access_record(request("/four"));
  CHECK(lines_of(log).size() == 2);
}

TEST_CASE("switched at run time: format, file, off") {
  TempDir dir;
  const fs::path a = dir.path / "a.log";
  const fs::path b = dir.path / "b.log";
  configure_access_log(to(a));
  write_access_record(request("/a1"));
  configure_access_log(to(a, config::AccessLogFormat::Json));
  write_access_record(request("/a2"));
  configure_access_log(to(b, config::AccessLogFormat::Common));
  write_access_record(request("/b1"));
  configure_access_log({});
  CHECK_FALSE(access_log_enabled());
  write_access_record(request("/nowhere"));
  const auto la = lines_of(a);
  REQUIRE(la.size() == 2);
  CHECK(la[0].find("\"GET /a1 HTTP/1.1\"") != std::string::npos);
  const auto j = nlohmann::json::parse(la[1]);
  CHECK(j["target"] == "/a2");
  CHECK(j["time"].get<std::string>().ends_with("Z"));
  const auto lb = lines_of(b);
  REQUIRE(lb.size() == 1);
  CHECK(lb[0].ends_with("\"GET /b1 HTTP/1.1\" 200 10 0.000"));
}

TEST_CASE("stderr: lines go to descriptor 2, which a reopen or a switch never closes") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(pipe_fds[1], STDERR_FILENO);
  configure_access_log({std::string(config::AccessLogConfig::kStderr), config::AccessLogFormat::Json});
  write_access_record(request("/err1"));
  reopen_access_log();
  write_access_record(request("/err2"));
  configure_access_log({});
  const bool open_after = ::fcntl(STDERR_FILENO, F_GETFD) != -1;
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(pipe_fds[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  CHECK(open_after);
  CHECK(got.find("\"target\":\"/err1\"") != std::string::npos);
  CHECK(got.find("\"target\":\"/err2\"") != std::string::npos);
}

TEST_CASE("a file that cannot be opened loses lines and nothing else; a later configure recovers") {
  TempDir dir;
  configure_access_log(to(dir.path / "missing-dir" / "access.log"));
  CHECK(access_log_enabled());
  for (int i = 0; i < 3; ++i) write_access_record(request("/lost"));
  reopen_access_log();  // still missing: the error is logged, nothing else
  fs::create_directory(dir.path / "missing-dir");
  reopen_access_log();
  write_access_record(request("/kept"));
  const auto lines = lines_of(dir.path / "missing-dir" / "access.log");
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find("/kept") != std::string::npos);
}

TEST_CASE("whole lines while four threads write and the format and file change under them") {
  TempDir dir;
  const fs::path a = dir.path / "a.log";
  const fs::path b = dir.path / "b.log";
  configure_access_log(to(a, config::AccessLogFormat::Json));
  constexpr int kThreads = 4, kEach = 500;
  std::atomic<int> started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &started] {
      ++started;
      for (int i = 0; i < kEach; ++i) {
        AccessRecord r = request("/t" + std::to_string(t) + "/" + std::to_string(i));
        r.user_agent = std::string(300, static_cast<char>('a' + t));  // long lines
        write_access_record(std::move(r));
      }
    });
  }
  while (started < kThreads) std::this_thread::yield();
  for (int k = 0; k < 20; ++k) {
    configure_access_log(to(k % 2 ? a : b, k % 3 ? config::AccessLogFormat::Json : config::AccessLogFormat::Combined));
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  configure_access_log(to(b, config::AccessLogFormat::Json));
  for (auto& t : threads) t.join();
  size_t total = 0;
  for (const auto& p : {a, b}) {
    for (const std::string& line : lines_of(p)) {
      ++total;
      if (line.starts_with("{")) {
        CHECK_NOTHROW((void)nlohmann::json::parse(line));
      } else {
        CHECK(line.ends_with("\" 0.000"));
        CHECK(line.starts_with("127.0.0.1 - - ["));
      }
    }
  }
  CHECK(total == kThreads * kEach);
}
