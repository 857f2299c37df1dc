// sluice-bench: a load generator for RTMP, HTTP-FLV, HLS, SRT and WHEP servers on Sluice's own protocol core.
//
//   sluice-bench play    -n 2000 --rate 200 --duration 30 rtmp://127.0.0.1/live/stream
//   sluice-bench play    -n 500 --duration 30 rtmps://127.0.0.1:4443/live/stream   (RTMP over TLS)
//   sluice-bench publish -n 10 --file src.flv rtmp://127.0.0.1/live/s{i}
//   sluice-bench latency -n 20 --file src.flv rtmp://127.0.0.1/live/lat
//   sluice-bench http-flv -n 500 --duration 30 http://127.0.0.1:8080/live/stream.flv
//   sluice-bench hls -n 1000 --duration 30 http://127.0.0.1:8080/live/stream/index.m3u8
//   sluice-bench hls -n 10 -f src.flv --publish rtmp://127.0.0.1/live/lat http://127.0.0.1:8080/live/lat/index.m3u8
//   sluice-bench srt-read -n 500 'srt://127.0.0.1:9000?streamid=read:live/cam'
//   sluice-bench srt-publish -n 20 -f src.ts 'srt://127.0.0.1:9000?streamid=publish:live/s{i}'
//   sluice-bench latency -f src.ts --publish 'srt://127.0.0.1:9000?streamid=publish:live/l' rtmp://127.0.0.1/live/l
//   sluice-bench whep -n 200 --rate 20 http://127.0.0.1:8080/live/cam/whep
//
// One process, one libuv loop. See bench/load/README.md for options and output fields.
#include <malloc.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench/load/flv_file.hpp"
#include "bench/load/options.hpp"
#include "bench/load/runner.hpp"
#include "bench/load/srt_client.hpp"
#include "bench/load/whep_context.hpp"

using namespace sluice;
using namespace sluice::bench;

namespace {

constexpr int kExitFailures = 1;
constexpr int kExitUsage = 2;
// Generous bound, so a typo cannot start an unbounded run.
constexpr double kMaxDurationS = 24 * 3600;

// Each connection is a descriptor; ask for as many as we are allowed before starting.
void raise_fd_limit(uint32_t connections) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return;
  if (lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  if (lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < connections + 64)
    std::fprintf(stderr, "sluice-bench: warning: only %llu file descriptors for %u connections\n",
                 (unsigned long long)lim.rlim_cur, connections);
}

enum class UrlKind : uint8_t { Rtmp, Http, Srt };

void add_common(CLI::App* cmd, BenchOptions& o, const char* clients_help, UrlKind kind = UrlKind::Rtmp) {
  const bool rtmp = kind == UrlKind::Rtmp;
  cmd->add_option("urls", o.urls,
                  rtmp ? "rtmp[s]://host[:port]/app/stream (several: round-robin; {i} = client index)"
                  : kind == UrlKind::Http ? "http://host[:port]/path (several: round-robin; {i} = client index)"
                                          : "srt://host:port?streamid=ID[&latency=MS][&passphrase=P] (several: "
                                            "round-robin; {i} = client index)")
      ->required();
  cmd->add_option("-n,--clients", o.clients, clients_help)->capture_default_str()->check(CLI::Range(1u, 100000u));
  cmd->add_option("--rate", o.rate, "ramp-up: new connections per second (0 = all at once)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-d,--duration", o.duration_s, "whole run in seconds, ramp-up included")
      ->capture_default_str()
      ->check(CLI::Range(0.1, kMaxDurationS));
  if (rtmp)
    cmd->add_option("--chunk-size", o.chunk_size, "our outgoing RTMP chunk size")
        ->capture_default_str()
        ->check(CLI::Range(128u, 65536u));
  cmd->add_option("--json", o.json_file, "also write the summary as JSON to this file");
  cmd->add_flag("--per-client", o.per_client, "include one record per client in the JSON");
  cmd->add_option("--allow-failures", o.allow_failures, "exit 0 while at most this many clients failed")
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o.quiet, "no progress lines on stderr");
}

// SRT callers' transport options.
void add_srt(CLI::App* cmd, BenchOptions& o) {
  cmd->add_option("--srt-latency", o.srt_latency_ms, "SRT latency asked for, ms (a URL's latency= overrides it)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 60000u));
  cmd->add_option("--srt-ports", o.srt_ports,
                  "SRT callers share this many local UDP ports (libsrt multiplexers); 0 = a port of its own each")
      ->capture_default_str()
      ->check(CLI::Range(0u, 65535u));
}

void add_player(CLI::App* cmd, BenchOptions& o, bool rtmp = true) {
  if (rtmp) {
    cmd->add_option(
           "--start", o.start_s,
           "play start in seconds: -1 live (sent as -1000, like ffmpeg), -2 live or recorded, >= 0 VOD position")
        ->capture_default_str();
    cmd->add_option("--buffer-ms", o.buffer_ms, "SetBufferLength sent after play")->capture_default_str();
  }
  cmd->add_option("--stall-ms", o.stall_ms, "media time behind wall time by more than this counts as a stall")
      ->capture_default_str()
      ->check(CLI::Range(1u, 600000u));
  cmd->add_option(
         "--read-batch-ms", o.read_batch_ms,
         "let this much media build up before reading (cheaper bench; 0 = read at once; default 100, latency 0)")
      ->check(CLI::Range(0, 1000));
}

int write_json(const BenchOptions& o, const Summary& s, Runner& runner) {
  std::ofstream f(o.json_file);
  if (!f) {
    std::fprintf(stderr, "sluice-bench: cannot write %s\n", o.json_file.c_str());
    return kExitUsage;
  }
  auto j = summary_json(s, runner.client_stats(), o.per_client);
  if (const WhepContext* whep = runner.whep()) {
    j["whep"] = whep_summary_json(*whep);
    j["options"]["freeze_ms"] = o.freeze_ms;
    j["options"]["consent_ms"] = o.consent_ms;
    j["options"]["srtp_profiles"] = o.srtp_profiles;
  }
  if (const SrtContext* srt = runner.srt()) {
    j["srt"] = srt_summary_json(*srt);
    j["options"]["srt_latency_ms"] = o.srt_latency_ms;
    j["options"]["srt_ports"] = o.srt_ports;
    if (!o.ts_file.empty()) j["options"]["file"] = o.ts_file;
    if (!o.publish_url.empty()) j["options"]["publish_url"] = o.publish_url;
  }
  f << j.dump(2) << "\n";
  return 0;
}

// Players receive keyframes of 100 KB and more, assembled in buffers that are freed at once.
// With glibc's defaults the heap top is trimmed and regrown constantly: every trim is a munmap
// with a TLB shootdown on all CPUs and every regrowth page-faults again. Measured with 2000
// players, that was a fifth of the bench's CPU and stopped its loop for up to a second during
// the ramp (counted as stalls). Keep freed memory instead; the bench's peak is what it is.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
  mallopt(M_TRIM_THRESHOLD, 512 * 1024 * 1024);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  BenchOptions o;
  CLI::App app{
      "sluice-bench: RTMP, HTTP-FLV, HLS, SRT and WHEP load generator (players, publishers, delay through the "
      "server)"};
  app.require_subcommand(1);
  auto* play = app.add_subcommand("play", "N players of one or several RTMP URLs, live or VOD");
  add_common(play, o, "players");
  add_player(play, o);
  auto* publish = app.add_subcommand("publish", "M publishers of an FLV file, paced in real time, looping");
  add_common(publish, o, "publishers");
  publish->add_option("-f,--file", o.flv_file, "FLV file to publish")->required()->check(CLI::ExistingFile);
  auto* latency = app.add_subcommand("latency", "publish one FLV and play it with K players: delay per message");
  add_common(latency, o, "players");
  add_player(latency, o);
  latency->add_option("-f,--file", o.flv_file, "FLV file to publish (with --publish srt://: an MPEG-TS file)")
      ->required()
      ->check(CLI::ExistingFile);
  latency->add_option("--publish", o.publish_url,
                      "publish -f FILE.ts over SRT to this srt:// URL instead (the players stay RTMP): the delay "
                      "from an SRT publisher to RTMP players");
  add_srt(latency, o);
  auto* http_flv = app.add_subcommand("http-flv", "N HTTP-FLV players (GET http://host:port/app/stream.flv)");
  add_common(http_flv, o, "players", UrlKind::Http);
  add_player(http_flv, o, false);
  http_flv->add_flag("--http10", o.http10, "send HTTP/1.0 requests (body ends at close) instead of HTTP/1.1 (chunked)");
  auto* hls =
      app.add_subcommand("hls", "N HLS readers (LL-HLS parts with blocking reload, or segments) of index.m3u8 URLs");
  add_common(hls, o, "readers", UrlKind::Http);
  hls->add_option("--stall-ms", o.stall_ms, "media time behind wall time by more than this counts as a stall")
      ->capture_default_str()
      ->check(CLI::Range(1u, 600000u));
  hls->add_flag("--hls-segments", o.hls_segments,
                "read whole segments as a standard HLS player, even from an LL-HLS playlist");
  hls->add_flag("--hls-no-skip", o.hls_no_skip, "no _HLS_skip=YES (delta updates) on blocking reloads");
  auto* hls_file =
      hls->add_option("-f,--file", o.flv_file, "with --publish: the FLV to publish")->check(CLI::ExistingFile);
  hls->add_option(
         "--publish", o.publish_url,
         "also publish --file to this rtmp:// URL; readers start once it is live and report each part's latency")
      ->needs(hls_file);
  auto* srt_read = app.add_subcommand("srt-read", "N SRT readers (callers in request mode) of srt:// URLs");
  add_common(srt_read, o, "readers", UrlKind::Srt);
  srt_read->add_option("--stall-ms", o.stall_ms, "media time behind wall time by more than this counts as a stall")
      ->capture_default_str()
      ->check(CLI::Range(1u, 600000u));
  add_srt(srt_read, o);
  auto* srt_publish =
      app.add_subcommand("srt-publish", "M SRT publishers of an MPEG-TS file, paced by its PCR in real time, looping");
  add_common(srt_publish, o, "publishers", UrlKind::Srt);
  srt_publish->add_option("-f,--file", o.ts_file, "MPEG-TS file to publish")->required()->check(CLI::ExistingFile);
  add_srt(srt_publish, o);
  auto* whep = app.add_subcommand("whep", "N WHEP players (http://host:port/app/stream/whep): ICE, DTLS, SRTP counted");
  add_common(whep, o, "players", UrlKind::Http);
  whep->add_option("--freeze-ms", o.freeze_ms, "no new video frame for longer than this counts as a freeze")
      ->capture_default_str()
      ->check(CLI::Range(1u, 600000u));
  whep->add_option("--consent-ms", o.consent_ms, "a STUN consent check this often")
      ->capture_default_str()
      ->check(CLI::Range(100u, 60000u));
  whep->add_option("--srtp-profiles", o.srtp_profiles,
                   "use_srtp profiles offered, OpenSSL's names (SRTP_AES128_CM_SHA1_80 alone forces AES-CM)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  if (play->parsed()) o.mode = Mode::Play;
  if (publish->parsed()) o.mode = Mode::Publish;
  if (latency->parsed()) o.mode = Mode::Latency;
  if (http_flv->parsed()) o.mode = Mode::HttpFlv;
  if (hls->parsed()) o.mode = Mode::Hls;
  if (srt_read->parsed()) o.mode = Mode::SrtRead;
  if (srt_publish->parsed()) o.mode = Mode::SrtPublish;
  if (whep->parsed()) o.mode = Mode::Whep;
  if (o.mode == Mode::Latency && !o.publish_url.empty()) {
    if (!o.publish_url.starts_with("srt://")) {
      std::fprintf(stderr, "sluice-bench: latency --publish takes an srt:// URL\n");
      return kExitUsage;
    }
    o.ts_file = std::exchange(o.flv_file, std::string());  // the file is MPEG-TS
  }
  if (o.read_batch_ms < 0) o.read_batch_ms = o.mode == Mode::Latency ? 0 : 100;

  std::unique_ptr<FlvFile> file;
  if (!o.flv_file.empty()) {
    auto loaded = FlvFile::load(o.flv_file);
    if (!loaded) {
      std::fprintf(stderr, "sluice-bench: %s\n", loaded.error().message().c_str());
      return kExitUsage;
    }
    file = std::make_unique<FlvFile>(std::move(*loaded));
    if (file->truncated())
      std::fprintf(stderr, "sluice-bench: note: %s ends with a truncated tag\n", o.flv_file.c_str());
  }

  // A peer that resets the connection must produce an error on write, not kill the process.
  std::signal(SIGPIPE, SIG_IGN);
  raise_fd_limit(o.clients + (o.mode == Mode::Latency || !o.publish_url.empty() ? 1 : 0));

  Runner runner(o, std::move(file));
  auto summary = runner.run();
  if (!summary) {
    std::fprintf(stderr, "sluice-bench: %s\n", summary.error().message().c_str());
    return kExitUsage;
  }
  print_summary(stdout, *summary);
  if (const SrtContext* srt = runner.srt()) print_srt_summary(stdout, *srt, o.mode);
  if (const WhepContext* whep = runner.whep()) print_whep_summary(stdout, *whep);
  std::fflush(stdout);
  if (!o.json_file.empty()) {
    if (int rc = write_json(o, *summary, runner); rc != 0) return rc;
  }
  const uint32_t failed = summary->players.failed + summary->publishers.failed;
  return failed > o.allow_failures ? kExitFailures : 0;
}
