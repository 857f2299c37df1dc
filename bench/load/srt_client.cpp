#include "bench/load/srt_client.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <srt/logging_api.h>
#include <sys/syslog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "base/percent_decode.hpp"
#include "bench/load/clock.hpp"
#include "bench/load/latency_tracker.hpp"
#include "bench/load/playback_monitor.hpp"
#include "bench/load/stats.hpp"
#include "bench/load/resolve.hpp"
#include "media/ts/pes.hpp"
#include "media/ts/ts_demuxer.hpp"
#include "media/ts/ts_format.hpp"
#include "media/ts/ts_packet.hpp"

namespace sluice::bench {

namespace {

using media::ts::kPacketSize;
using media::ts::kSyncByte;
using media::ts::kTimestampMask;

constexpr int kEpollBatch = 1024;
constexpr int kEpollWaitMs = 100;  // how soon the thread sees a stop
constexpr size_t kMaxMessage = 1500;
constexpr long kMaxFileSize = 1L << 30;
constexpr int64_t kDrainAckNs = 3 * kNsPerSec;
constexpr int64_t kDrainMarginMs = 150;
// A publisher this far behind its real-time schedule (libsrt's send buffer full) has failed.
constexpr int64_t kMaxBehindNs = 5 * kNsPerSec;
constexpr uint16_t kNoPid = 0x1FFF;
constexpr uint8_t kVideo = 9;

std::string srt_error(const char* call) { return std::string(call) + ": " + srt_getlasterror_str(); }

template <typename T>
bool set_flag(SRTSOCKET s, SRT_SOCKOPT opt, T value) {
  return srt_setsockflag(s, opt, &value, sizeof value) == 0;
}

Result<std::string> percent_decoded(std::string_view in) {
  std::string out;
  if (!percent_decode(in, out)) return Error(Errc::Config, "bad percent-encoding");
  return out;
}

uint16_t pid_of(const uint8_t* p) { return static_cast<uint16_t>(((p[1] & 0x1F) << 8) | p[2]); }
bool unit_start(const uint8_t* p) { return (p[1] & 0x40) != 0; }

// 33-bit PTS/DTS in the 5-byte form of a PES header; the prefix nibble and marker bits stay.
uint64_t read_pts(const uint8_t* b) {
  return (uint64_t{(b[0] >> 1) & 0x07u} << 30) | (uint64_t{b[1]} << 22) | (static_cast<uint64_t>(b[2] >> 1) << 15) |
         (uint64_t{b[3]} << 7) | (b[4] >> 1);
}
void write_pts(uint8_t* b, uint64_t v) {
  b[0] = static_cast<uint8_t>((b[0] & 0xF0) | ((v >> 29) & 0x0E) | 1);
  b[1] = static_cast<uint8_t>(v >> 22);
  b[2] = static_cast<uint8_t>(((v >> 14) & 0xFE) | 1);
  b[3] = static_cast<uint8_t>(v >> 7);
  b[4] = static_cast<uint8_t>(((v << 1) & 0xFE) | 1);
}
// The PCR of an adaptation field (packet bytes 6..11): 33-bit base, 6 reserved bits, 9-bit extension.
uint64_t read_pcr_base(const uint8_t* b) {
  return (uint64_t{b[0]} << 25) | (uint64_t{b[1]} << 17) | (uint64_t{b[2]} << 9) | (uint64_t{b[3]} << 1) | (b[4] >> 7);
}
uint32_t read_pcr_ext(const uint8_t* b) { return (uint32_t{b[4] & 1u} << 8) | b[5]; }
void write_pcr_base(uint8_t* b, uint64_t base) {
  b[0] = static_cast<uint8_t>(base >> 25);
  b[1] = static_cast<uint8_t>(base >> 17);
  b[2] = static_cast<uint8_t>(base >> 9);
  b[3] = static_cast<uint8_t>(base >> 1);
  b[4] = static_cast<uint8_t>((b[4] & 0x7F) | ((base & 1) << 7));
}

// Stream ids whose PES header has the optional fields (PTS, DTS): not the program stream map,
// padding, private stream 2, ECM, EMM, DSMCC, H.222.1 type E or the directory.
bool pes_has_header(uint8_t stream_id) {
  switch (stream_id) {
    case 0xBC:
    case 0xBE:
    case 0xBF:
    case 0xF0:
    case 0xF1:
    case 0xF2:
    case 0xF8:
    case 0xFF: return false;
    default: return true;
  }
}

// Unwraps 33-bit timestamps against the previous one, as the server's demuxer does.
class Unwrapper {
 public:
  int64_t operator()(uint64_t ts33) {
    if (!have_) {
      have_ = true;
      last_ = static_cast<int64_t>(ts33 & kTimestampMask);
      return last_;
    }
    auto diff = static_cast<int64_t>((ts33 - static_cast<uint64_t>(last_)) & kTimestampMask);
    if (diff >= (int64_t{1} << 32)) diff -= int64_t{1} << 33;
    last_ += diff;
    return last_;
  }
  bool started() const { return have_; }

 private:
  bool have_ = false;
  int64_t last_ = 0;
};

nlohmann::json dist_json(const Distribution& d) {
  return {{"count", d.count}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

std::string dist_text(const Distribution& d) {
  if (d.count == 0) return "none";
  char buf[160];
  std::snprintf(buf, sizeof buf, "p50=%.1f p90=%.1f p99=%.1f max=%.1f (n=%zu)", d.p50, d.p90, d.p99, d.max, d.count);
  return buf;
}

}  // namespace

// --- URL ----------------------------------------------------------------------------------------

Result<SrtUrl> parse_srt_url(std::string_view text) {
  SrtUrl u;
  u.text = std::string(text);
  if (!text.starts_with("srt://")) return Error(Errc::Config, "not an srt:// URL: " + u.text);
  std::string_view rest = text.substr(6);
  std::string_view query;
  if (const size_t q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  std::string_view port_text;
  if (!rest.empty() && rest.front() == '[') {
    const size_t close = rest.find(']');
    if (close == std::string_view::npos) return Error(Errc::Config, "unbalanced '[' in URL: " + u.text);
    u.host = std::string(rest.substr(1, close - 1));
    if (close + 1 < rest.size() && rest[close + 1] == ':') port_text = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    if (colon != std::string_view::npos) {
      u.host = std::string(rest.substr(0, colon));
      port_text = rest.substr(colon + 1);
    }
  }
  if (u.host.empty() || port_text.empty()) return Error(Errc::Config, "srt:// URL needs host:port: " + u.text);
  unsigned port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9' || port > 65535) return Error(Errc::Config, "bad port in URL: " + u.text);
    port = port * 10 + static_cast<unsigned>(c - '0');
  }
  if (port == 0 || port > 65535) return Error(Errc::Config, "bad port in URL: " + u.text);
  u.port = static_cast<uint16_t>(port);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const size_t eq = pair.find('=');
    const std::string_view key = pair.substr(0, eq);
    auto value = percent_decoded(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
    if (!value) return Error(Errc::Config, "bad percent-encoding in URL: " + u.text);
    if (key == "streamid") {
      u.stream_id = std::move(*value);
    } else if (key == "latency") {
      char* end = nullptr;
      const long ms = std::strtol(value->c_str(), &end, 10);
      if (value->empty() || *end != 0 || ms < 0 || ms > 60000)
        return Error(Errc::Config, "latency= is milliseconds, 0..60000: " + u.text);
      u.latency_ms = static_cast<int32_t>(ms);
    } else if (key == "passphrase") {
      u.passphrase = std::move(*value);
    } else if (!key.empty()) {
      return Error(Errc::Config, "unknown srt:// URL key '" + std::string(key) + "' (streamid, latency, passphrase)");
    }
  }
  if (u.stream_id.size() > 512) return Error(Errc::Config, "stream id longer than 512 bytes: " + u.text);
  if (auto r = resolve_host(u.host, u.port, SOCK_DGRAM, u.addr); !r) return r.error();
  return u;
}

// --- TS file ------------------------------------------------------------------------------------

Result<TsFile> TsFile::load(const std::string& path, size_t packets_per_message) {
  std::FILE* fp = std::fopen(path.c_str(), "rb");
  if (!fp) return Error(Errc::Io, "cannot open " + path);
  std::fseek(fp, 0, SEEK_END);
  const long size = std::ftell(fp);
  std::fseek(fp, 0, SEEK_SET);
  if (size <= 0 || size > kMaxFileSize) {
    std::fclose(fp);
    return Error(Errc::LimitExceeded, path + ": empty, not a regular file, or larger than 1 GiB");
  }
  TsFile f;
  f.bytes_.resize(static_cast<size_t>(size));
  const size_t got = std::fread(f.bytes_.data(), 1, f.bytes_.size(), fp);
  std::fclose(fp);
  if (got != f.bytes_.size()) return Error(Errc::Io, "cannot read " + path);
  if (f.bytes_.size() % kPacketSize != 0)
    return Error(Errc::Malformed, path + ": not a whole number of 188-byte MPEG-TS packets");
  const size_t n = f.bytes_.size() / kPacketSize;
  f.info_.resize(n);

  // Pass 1: each packet's PID slot, payload, PCR, PTS and DTS places; the PCRs and PES times.
  std::array<int16_t, 8192> slot_of{};
  slot_of.fill(-1);
  std::vector<uint16_t> slot_pid;
  std::vector<bool> cc_seen;
  std::vector<std::pair<size_t, double>> pcrs;  // packet, PCR in 90 kHz ticks (unwrapped, fractional)
  int pcr_pid = -1;
  Unwrapper pcr_clock, pes_clock;
  int64_t ts_min = 0, ts_max = 0;
  bool have_ts = false;
  std::vector<int64_t> pcr_pid_pes;         // PES times on the PCR's PID (the video), for a frame's length
  std::vector<size_t> pes_length(8192, 1);  // per PID: the PES_packet_length of the PES in progress
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = f.bytes_.data() + i * kPacketSize;
    if (p[0] != kSyncByte)
      return Error(Errc::Malformed, path + ": packet " + std::to_string(i) + " has no sync byte (0x47)");
    const uint16_t pid = pid_of(p);
    if (slot_of[pid] < 0) {
      if (slot_pid.size() >= 255) return Error(Errc::Unsupported, path + ": more than 255 PIDs");
      slot_of[pid] = static_cast<int16_t>(slot_pid.size());
      slot_pid.push_back(pid);
      f.first_cc_.push_back(0);
      cc_seen.push_back(false);
    }
    PacketInfo& info = f.info_[i];
    info.slot = static_cast<uint8_t>(slot_of[pid]);
    const uint8_t afc = (p[3] >> 4) & 3;
    info.has_payload = (afc & 1) != 0;
    size_t payload = 4;
    if (afc & 2) {
      const size_t len = p[4];
      if (5 + len > kPacketSize)
        return Error(Errc::Malformed, path + ": packet " + std::to_string(i) + ": adaptation field too long");
      if (len >= 7 && (p[5] & 0x10)) info.has_pcr = true;
      payload = 5 + len;
    }
    if (info.has_payload && !cc_seen[info.slot]) {
      cc_seen[info.slot] = true;
      f.first_cc_[info.slot] = p[3] & 0x0F;
    }
    if (info.has_pcr) {
      if (pcr_pid < 0) pcr_pid = pid;
      if (pid == pcr_pid) {
        const int64_t base = pcr_clock(read_pcr_base(p + 6));
        pcrs.emplace_back(i, static_cast<double>(base) + read_pcr_ext(p + 6) / 300.0);
      }
    }
    if (info.has_payload && unit_start(p) && payload + 14 <= kPacketSize) {
      const uint8_t* q = p + payload;
      if (q[0] == 0 && q[1] == 0 && q[2] == 1 && pes_has_header(q[3])) {
        pes_length[pid] = (size_t{q[4]} << 8) | q[5];
        const uint8_t flags = q[7] >> 6;
        if (flags & 2) info.pts_offset = static_cast<uint8_t>(payload + 9);
        if (flags == 3 && payload + 19 <= kPacketSize) info.dts_offset = static_cast<uint8_t>(payload + 14);
        if (info.pts_offset) {
          const int64_t t = pes_clock(read_pts(p + (info.dts_offset ? info.dts_offset : info.pts_offset)));
          ts_min = have_ts ? std::min(ts_min, t) : t;
          ts_max = have_ts ? std::max(ts_max, t) : t;
          have_ts = true;
          if (static_cast<int>(pid) == pcr_pid || pcr_pid < 0) pcr_pid_pes.push_back(t);
        }
      }
    }
  }
  if (!have_ts) return Error(Errc::Malformed, path + ": no PES with a PTS: not an audio/video transport stream");

  // One loop: the PES times' span plus one frame (the median step of the PCR PID's PES times).
  int64_t frame_ticks = 3600;  // 40 ms
  if (pcr_pid_pes.size() >= 3) {
    std::vector<int64_t> steps;
    for (size_t i = 1; i < pcr_pid_pes.size(); ++i)
      if (pcr_pid_pes[i] > pcr_pid_pes[i - 1]) steps.push_back(pcr_pid_pes[i] - pcr_pid_pes[i - 1]);
    if (!steps.empty()) {
      std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2), steps.end());
      frame_ticks = steps[steps.size() / 2];
    }
  }
  f.loop_ms_ = static_cast<uint32_t>((ts_max - ts_min + frame_ticks + 89) / 90);
  if (f.loop_ms_ < 100) return Error(Errc::Unsupported, path + ": shorter than 100 ms");

  // Pacing: the PCR, linear between the packets that carry one; without two increasing PCRs, the
  // file's bytes spread evenly over its length.
  std::vector<int64_t> t_us(n);
  bool pcr_ok = pcrs.size() >= 2;
  for (size_t k = 1; k < pcrs.size() && pcr_ok; ++k) pcr_ok = pcrs[k].second > pcrs[k - 1].second;
  f.paced_by_pcr_ = pcr_ok;
  const double loop_us = f.loop_ms_ * 1000.0;
  if (pcr_ok) {
    const double t0 = pcrs.front().second;
    const double us_per_packet =
        (pcrs.back().second - t0) / 0.09 / static_cast<double>(pcrs.back().first - pcrs.front().first);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
      while (k + 1 < pcrs.size() && pcrs[k + 1].first <= i) ++k;
      double us;
      if (i <= pcrs.front().first) {
        us = 0;
      } else if (k + 1 < pcrs.size()) {
        const auto& [i0, c0] = pcrs[k];
        const auto& [i1, c1] = pcrs[k + 1];
        us = ((c0 - t0) + (c1 - c0) * static_cast<double>(i - i0) / static_cast<double>(i1 - i0)) / 0.09;
      } else {
        us = (pcrs.back().second - t0) / 0.09 + us_per_packet * static_cast<double>(i - pcrs.back().first);
      }
      t_us[i] = static_cast<int64_t>(std::min(us, loop_us));
    }
  } else {
    for (size_t i = 0; i < n; ++i)
      t_us[i] = static_cast<int64_t>(loop_us * static_cast<double>(i) / static_cast<double>(n));
  }

  // The frames a player will get, by the server's own demuxer, with the packet holding each
  // frame's last byte: the packet that completed it, or for a PES without a length (video),
  // the previous packet of its PID.
  media::ts::TsDemuxer demuxer;
  std::vector<media::ts::TsDemuxer::Frame> out;
  std::vector<int64_t> last_on_slot(slot_pid.size(), -1);
  std::vector<bool> unbounded(slot_pid.size(), false);
  std::vector<std::pair<size_t, FrameKey>> keyed;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = f.bytes_.data() + i * kPacketSize;
    const PacketInfo& info = f.info_[i];
    out.clear();
    if (auto fed = demuxer.feed({p, kPacketSize}, out); !fed)
      return Error(Errc::Malformed, path + ": the server's MPEG-TS demuxer refuses it: " + fed.error().message());
    if (!out.empty()) {
      size_t last = i;
      if (unit_start(p) && info.has_payload && unbounded[info.slot] && last_on_slot[info.slot] >= 0)
        last = static_cast<size_t>(last_on_slot[info.slot]);
      for (const auto& fr : out) {
        keyed.push_back({last, FrameKey{fr.type, fr.timestamp}});
        if (last != i) f.pes_end_wait_ms_.push_back(static_cast<double>(t_us[i] - t_us[last]) / 1000.0);
      }
    }
    if (info.has_payload) {
      if (unit_start(p) && info.pts_offset) unbounded[info.slot] = pes_length[pid_of(p)] == 0;
      last_on_slot[info.slot] = static_cast<int64_t>(i);
    }
  }
  // The last video PES of the file ends with the first of the next loop: its frames are sent with
  // the file's last packet.
  out.clear();
  demuxer.flush(out);
  for (const auto& fr : out) keyed.push_back({n - 1, FrameKey{fr.type, fr.timestamp}});
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

  const size_t per = std::max<size_t>(1, packets_per_message);
  size_t k = 0;
  for (size_t first = 0; first < n; first += per) {
    Message m;
    m.first_packet = static_cast<uint32_t>(first);
    m.packets = static_cast<uint32_t>(std::min(per, n - first));
    m.due_us = t_us[first + m.packets - 1];
    m.frames_begin = static_cast<uint32_t>(f.frame_keys_.size());
    while (k < keyed.size() && keyed[k].first < first + m.packets) f.frame_keys_.push_back(keyed[k++].second);
    m.frames_end = static_cast<uint32_t>(f.frame_keys_.size());
    f.messages_.push_back(m);
  }
  return f;
}

std::vector<uint8_t> TsFile::initial_cc() const { return first_cc_; }

void TsFile::render(const Message& m, uint32_t loop, std::vector<uint8_t>& out, std::vector<uint8_t>& cc) const {
  const size_t size = size_t{m.packets} * kPacketSize;
  out.resize(size);
  std::memcpy(out.data(), bytes_.data() + size_t{m.first_packet} * kPacketSize, size);
  const uint64_t shift = uint64_t{loop} * loop_ms_ * 90;
  for (uint32_t j = 0; j < m.packets; ++j) {
    uint8_t* q = out.data() + size_t{j} * kPacketSize;
    const PacketInfo& info = info_[m.first_packet + j];
    if (shift != 0) {
      if (info.has_pcr) write_pcr_base(q + 6, (read_pcr_base(q + 6) + shift) & kTimestampMask);
      if (info.pts_offset) write_pts(q + info.pts_offset, (read_pts(q + info.pts_offset) + shift) & kTimestampMask);
      if (info.dts_offset) write_pts(q + info.dts_offset, (read_pts(q + info.dts_offset) + shift) & kTimestampMask);
    }
    uint8_t& c = cc[info.slot];
    if (info.has_payload) {
      q[3] = static_cast<uint8_t>((q[3] & 0xF0) | c);
      c = static_cast<uint8_t>((c + 1) & 0x0F);
    } else {
      q[3] = static_cast<uint8_t>((q[3] & 0xF0) | ((c + 15) & 0x0F));
    }
  }
}

// --- context ------------------------------------------------------------------------------------

SrtContext::SrtContext(uv_loop_t* loop, const BenchOptions& options)
    : loop_(loop), options_(options), ports_(options.srt_ports, 0) {}

SrtContext::~SrtContext() {
  close();
  if (eid_ >= 0) srt_epoll_release(eid_);
  if (started_) srt_cleanup();
}

Result<void> SrtContext::start() {
  if (srt_startup() < 0) return Error(Errc::Io, srt_error("srt_startup"));
  started_ = true;
  srt_setloglevel(LOG_CRIT);  // failures are the clients' to report, once
  eid_ = srt_epoll_create();
  if (eid_ < 0) return Error(Errc::Io, srt_error("srt_epoll_create"));
  srt_epoll_set(eid_, SRT_EPOLL_ENABLE_EMPTY);
  uv_async_init(loop_, &async_, &SrtContext::on_async);
  async_.data = this;
  async_open_ = true;
  thread_ = std::thread([this] { run(); });
  return ok();
}

void SrtContext::run() {
  std::vector<SRT_EPOLL_EVENT> ready(kEpollBatch);
  while (!stopping_.load(std::memory_order_relaxed)) {
    const int n = srt_epoll_uwait(eid_, ready.data(), kEpollBatch, kEpollWaitMs);
    if (n <= 0) continue;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.insert(pending_.end(), ready.begin(), ready.begin() + n);
    }
    uv_async_send(&async_);
  }
}

void SrtContext::on_async(uv_async_t* async) {
  auto* self = static_cast<SrtContext*>(async->data);
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->taking_.swap(self->pending_);
  }
  guarded("srt events", [&] {
    for (const SRT_EPOLL_EVENT& e : self->taking_) {
      auto it = self->endpoints_.find(e.fd);
      if (it != self->endpoints_.end()) it->second->on_srt_ready(e.events);
    }
  });
  self->taking_.clear();
}

Result<SRTSOCKET> SrtContext::open_caller(const SrtUrl& url, uint32_t index, SrtEndpoint* endpoint, int events) {
  const SRTSOCKET s = srt_create_socket();
  if (s == SRT_INVALID_SOCK) return Error(Errc::Io, srt_error("srt_create_socket"));
  const int32_t latency = url.latency_ms >= 0 ? url.latency_ms : static_cast<int32_t>(options_.srt_latency_ms);
  bool ok = set_flag<int32_t>(s, SRTO_TRANSTYPE, SRTT_LIVE) && set_flag<bool>(s, SRTO_RCVSYN, false) &&
            set_flag<bool>(s, SRTO_SNDSYN, false) && set_flag<int32_t>(s, SRTO_RCVLATENCY, latency) &&
            set_flag<int32_t>(s, SRTO_PEERLATENCY, latency);
  if (ok && !url.stream_id.empty())
    ok = srt_setsockflag(s, SRTO_STREAMID, url.stream_id.data(), static_cast<int>(url.stream_id.size())) == 0;
  if (ok && !url.passphrase.empty())
    ok = srt_setsockflag(s, SRTO_PASSPHRASE, url.passphrase.data(), static_cast<int>(url.passphrase.size())) == 0;
  if (!ok) {
    std::string why = srt_error("srt_setsockflag");
    srt_close(s);
    return Error(Errc::Io, why);
  }
  const bool v6 = url.addr.ss_family == AF_INET6;
  const int addr_len = v6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  if (!ports_.empty()) {
    // Callers on one local port share one libsrt multiplexer (one UDP socket, one receiving and
    // one sending thread); the first caller of a slot takes a port, the others join it.
    // On the loopback address when the server is there, else on every address.
    uint16_t& port = ports_[index % ports_.size()];
    sockaddr_storage local{};
    local.ss_family = url.addr.ss_family;
    if (v6) {
      auto* in6 = reinterpret_cast<sockaddr_in6*>(&local);
      in6->sin6_port = htons(port);
      if (IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&url.addr)->sin6_addr))
        in6->sin6_addr = in6addr_loopback;
    } else {
      auto* in = reinterpret_cast<sockaddr_in*>(&local);
      in->sin_port = htons(port);
      const uint32_t dest = ntohl(reinterpret_cast<const sockaddr_in*>(&url.addr)->sin_addr.s_addr);
      if ((dest >> 24) == 127) in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    }
    if (srt_bind(s, reinterpret_cast<const sockaddr*>(&local), addr_len) != 0) {
      std::string why = srt_error("srt_bind");
      srt_close(s);
      return Error(Errc::Io, why);
    }
    if (port == 0) {
      int len = sizeof local;
      if (srt_getsockname(s, reinterpret_cast<sockaddr*>(&local), &len) == 0)
        port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                        : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    }
  }
  endpoints_[s] = endpoint;
  const int flags = events | SRT_EPOLL_ET;
  srt_epoll_add_usock(eid_, s, &flags);
  if (srt_connect(s, reinterpret_cast<const sockaddr*>(&url.addr), addr_len) == SRT_ERROR) {
    std::string why = srt_error("srt_connect");
    endpoints_.erase(s);
    srt_close(s);
    return Error(Errc::Io, why);
  }
  return s;
}

void SrtContext::watch(SRTSOCKET s, int events) {
  const int flags = events | SRT_EPOLL_ET;
  srt_epoll_update_usock(eid_, s, &flags);
}

void SrtContext::record(SRTSOCKET s) {
  SRT_TRACEBSTATS st{};
  if (srt_bstats(s, &st, 0) != 0) return;
  totals_.packets_sent += static_cast<uint64_t>(std::max<int64_t>(0, st.pktSentTotal));
  totals_.packets_received += static_cast<uint64_t>(std::max<int64_t>(0, st.pktRecvTotal));
  totals_.packets_retransmitted += static_cast<uint64_t>(std::max(0, st.pktRetransTotal));
  totals_.packets_lost_send += static_cast<uint64_t>(std::max(0, st.pktSndLossTotal));
  totals_.packets_lost_receive += static_cast<uint64_t>(std::max(0, st.pktRcvLossTotal));
  totals_.packets_dropped_send += static_cast<uint64_t>(std::max(0, st.pktSndDropTotal));
  totals_.packets_dropped_receive += static_cast<uint64_t>(std::max(0, st.pktRcvDropTotal));
  totals_.rtt_ms_max = std::max(totals_.rtt_ms_max, st.msRTT);
}

void SrtContext::close_socket(SRTSOCKET s) {
  if (s == SRT_INVALID_SOCK) return;
  record(s);
  endpoints_.erase(s);
  if (eid_ >= 0) srt_epoll_remove_usock(eid_, s);
  srt_close(s);
}

void SrtContext::drain() {
  if (drainables_.empty()) return;
  const int64_t t0 = now_ns();
  for (Drainable* d : drainables_) d->halt();
  int32_t latency = 0;
  for (;;) {
    bool pending = false;
    for (Drainable* d : drainables_) {
      const SRTSOCKET s = d->drain_socket();
      if (s == SRT_INVALID_SOCK) continue;
      size_t blocks = 0, bytes = 0;
      if (srt_getsndbuffer(s, &blocks, &bytes) == 0 && blocks > 0) pending = true;
    }
    if (!pending || now_ns() - t0 > kDrainAckNs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  for (Drainable* d : drainables_) {
    const SRTSOCKET s = d->drain_socket();
    int32_t peer = 0;
    int len = sizeof peer;
    if (s != SRT_INVALID_SOCK && srt_getsockflag(s, SRTO_PEERLATENCY, &peer, &len) == 0)
      latency = std::max(latency, peer);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(latency + kDrainMarginMs));
  drain_ms_ = static_cast<double>(now_ns() - t0) / kNsPerMs;
}

void SrtContext::close() {
  stopping_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
  if (async_open_) {
    async_open_ = false;
    uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
  }
}

void SrtContext::note_ttfb(int64_t ns) { ttfb_ms_.push_back(static_cast<double>(ns) / kNsPerMs); }

// --- reader -------------------------------------------------------------------------------------

namespace {

class SrtReaderClient final : public Client, public SrtEndpoint {
 public:
  SrtReaderClient(SrtContext& ctx, SrtUrl url, const BenchOptions& options, ClientStats identity)
      : ctx_(ctx), url_(std::move(url)), monitor_(options.stall_ms), stats_(std::move(identity)) {
    stats_.role = ClientRole::Player;
  }

  void start() override {
    stats_.started_ns = now_ns();
    state_ = State::Connecting;
    auto s = ctx_.open_caller(url_, stats_.index, this, SRT_EPOLL_IN | SRT_EPOLL_OUT | SRT_EPOLL_ERR);
    if (!s) return fail(s.error().message());
    socket_ = *s;
  }

  void tick(int64_t now) override {
    if (state_ == State::Reading && stats_.ok && !stats_.ended) monitor_.check(now, stats_);
  }

  void stop() override {
    stopping_ = true;
    if (state_ == State::Idle) {
      mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
    } else if (!stats_.ok && !stats_.failed && !stats_.ended) {
      mark_failed(stats_, state_ == State::Connecting ? "not connected before the end" : "no media before the end");
    }
    state_ = State::Done;
    ctx_.close_socket(std::exchange(socket_, SRT_INVALID_SOCK));
  }

  const ClientStats& stats() override { return stats_; }

  void on_srt_ready(int events) override {
    if (state_ == State::Connecting) {
      const SRT_SOCKSTATUS st = srt_getsockstate(socket_);
      if (st == SRTS_CONNECTED) {
        connected();
      } else if ((events & SRT_EPOLL_ERR) || st == SRTS_BROKEN || st == SRTS_CLOSED || st == SRTS_NONEXIST) {
        const int reason = srt_getrejectreason(socket_);
        return fail(std::string("connect: ") + (reason >= SRT_REJC_PREDEFINED
                                                    ? "rejected, code " + std::to_string(reason)
                                                    : std::string(srt_rejectreason_str(reason))));
      } else {
        return;
      }
    }
    if (state_ != State::Reading) return;
    if (events & SRT_EPOLL_IN) read_all();
    if (state_ == State::Reading && (events & SRT_EPOLL_ERR)) {
      read_all();  // what came before the close
      peer_closed();
    }
  }

 private:
  enum class State : uint8_t { Idle, Connecting, Reading, Done };

  void connected() {
    const int64_t now = now_ns();
    state_ = State::Reading;
    stats_.setup_ns = now - stats_.started_ns;
    connected_ns_ = now;
    monitor_.on_play_sent(now);
    ctx_.watch(socket_, SRT_EPOLL_IN | SRT_EPOLL_ERR);
  }

  void read_all() {
    uint8_t buf[kMaxMessage];
    while (state_ == State::Reading) {
      const int n = srt_recvmsg(socket_, reinterpret_cast<char*>(buf), sizeof buf);
      if (n == SRT_ERROR) {
        if (srt_getlasterror(nullptr) != SRT_EASYNCRCV) peer_closed();
        return;
      }
      if (n <= 0) return;
      const int64_t now = now_ns();
      stats_.bytes_in += static_cast<uint64_t>(n);
      ctx_.note_read(static_cast<size_t>(n));
      if (!stats_.ok) {
        stats_.ok = !stats_.failed;
        ctx_.note_ttfb(now - connected_ns_);
      }
      scan(buf, static_cast<size_t>(n), now);
    }
  }

  // Every message is whole 188-byte packets, each starting with the sync byte.
  void scan(const uint8_t* p, size_t n, int64_t now) {
    if (n % kPacketSize != 0) {
      ctx_.note_sync_error();
      mark_failed(stats_, "an SRT message of " + std::to_string(n) + " bytes: not whole 188-byte packets");
      return;
    }
    for (size_t off = 0; off < n; off += kPacketSize) {
      const uint8_t* q = p + off;
      if (q[0] != kSyncByte) {
        ctx_.note_sync_error();
        mark_failed(stats_, "MPEG-TS sync byte (0x47) missing");
        return;
      }
      const uint16_t pid = pid_of(q);
      if (pid == 0 || pid == pmt_pid_ || (pid == video_pid_ && unit_start(q))) packet({q, kPacketSize}, pid, now);
    }
  }

  void packet(std::span<const uint8_t> bytes, uint16_t pid, int64_t now) {
    auto parsed = media::ts::parse_ts_packet(bytes);
    if (!parsed) return;
    const media::ts::TsPacket& p = *parsed;
    if (pid == 0 || pid == pmt_pid_) {
      sections_.clear();
      (pid == 0 ? pat_ : pmt_).feed(p, sections_);
      for (const auto& s : sections_) {
        if (pid == 0) {
          if (auto pmt = media::ts::parse_pat(s)) pmt_pid_ = *pmt;
        } else if (auto map = media::ts::parse_pmt(s)) {
          for (const auto& st : map->streams) {
            if (st.type == media::ts::kStreamTypeH264 || st.type == media::ts::kStreamTypeHevc) {
              video_pid_ = st.pid;
              break;
            }
          }
        }
      }
      return;
    }
    auto h = media::ts::parse_pes_header(p.payload);
    if (!h || !h->pts) return;
    ctx_.note_video_pes();
    const int64_t t = clock_(h->dts.value_or(*h->pts));
    if (!have_first_) {
      have_first_ = true;
      first_ticks_ = t;
    }
    // The media clock in ms from 1000, and a two-byte FLV video header saying whether this is a
    // keyframe (random_access_indicator), so the monitor sees a picture as from an RTMP player.
    const auto ms = static_cast<uint32_t>(1000 + (t - first_ticks_) / 90);
    const uint8_t header[2] = {static_cast<uint8_t>(p.random_access ? 0x17 : 0x27), 1};
    monitor_.on_media(kVideo, ms, header, now, stats_);
  }

  void peer_closed() {
    if (stopping_ || state_ != State::Reading) return;
    state_ = State::Done;
    // MPEG-TS cannot say a stream ended: the server closes a reader when the publication ends.
    if (stats_.ok) {
      stats_.ended = true;
    } else {
      mark_failed(stats_, "closed by the server (or broken) before any media");
    }
    ctx_.close_socket(std::exchange(socket_, SRT_INVALID_SOCK));
  }

  void fail(const std::string& reason) {
    mark_failed(stats_, reason);
    stats_.ok = false;
    state_ = State::Done;
    ctx_.close_socket(std::exchange(socket_, SRT_INVALID_SOCK));
  }

  SrtContext& ctx_;
  SrtUrl url_;
  PlaybackMonitor monitor_;
  ClientStats stats_;
  State state_ = State::Idle;
  SRTSOCKET socket_ = SRT_INVALID_SOCK;
  bool stopping_ = false;
  int64_t connected_ns_ = 0;
  media::ts::SectionReader pat_;
  media::ts::SectionReader pmt_;
  std::vector<std::vector<uint8_t>> sections_;
  uint16_t pmt_pid_ = kNoPid;
  uint16_t video_pid_ = kNoPid;
  Unwrapper clock_;
  bool have_first_ = false;
  int64_t first_ticks_ = 0;
};

// --- publisher ----------------------------------------------------------------------------------

class SrtPublisherClient final : public Client, public SrtEndpoint, public SrtContext::Drainable {
 public:
  SrtPublisherClient(SrtContext& ctx, SrtUrl url, const TsFile& file, ClientStats identity, LatencyTracker* tracker)
      : ctx_(ctx), url_(std::move(url)), file_(file), tracker_(tracker), stats_(std::move(identity)) {
    stats_.role = ClientRole::Publisher;
    cc_ = file_.initial_cc();
    uv_timer_init(ctx_.loop(), &timer_);
    timer_.data = this;
    ctx_.add_drainable(this);
  }

  void start() override {
    stats_.started_ns = now_ns();
    state_ = State::Connecting;
    auto s = ctx_.open_caller(url_, stats_.index, this, SRT_EPOLL_OUT | SRT_EPOLL_ERR);
    if (!s) return fail(s.error().message());
    socket_ = *s;
  }

  void tick(int64_t) override {}

  void stop() override {
    stopping_ = true;
    if (state_ == State::Idle) {
      mark_failed(stats_, "not started before the end (ramp-up too slow for the duration)");
    } else if (!stats_.ok && !stats_.failed) {
      mark_failed(stats_, "not connected before the end");
    }
    state_ = State::Done;
    uv_timer_stop(&timer_);
    uv_close(reinterpret_cast<uv_handle_t*>(&timer_), nullptr);
    ctx_.close_socket(std::exchange(socket_, SRT_INVALID_SOCK));
  }

  const ClientStats& stats() override { return stats_; }

  void halt() override {
    if (state_ == State::Sending) state_ = State::Halted;
    uv_timer_stop(&timer_);
  }
  SRTSOCKET drain_socket() const override { return state_ == State::Halted ? socket_ : SRT_INVALID_SOCK; }

  void on_srt_ready(int events) override {
    if (state_ == State::Connecting) {
      const SRT_SOCKSTATUS st = srt_getsockstate(socket_);
      if (st == SRTS_CONNECTED) {
        state_ = State::Sending;
        stats_.ok = true;
        const int64_t now = now_ns();
        stats_.setup_ns = now - stats_.started_ns;
        t0_ns_ = now;
        ctx_.watch(socket_, SRT_EPOLL_ERR);
        pump();
        return;
      }
      if ((events & SRT_EPOLL_ERR) || st == SRTS_BROKEN || st == SRTS_CLOSED || st == SRTS_NONEXIST) {
        const int reason = srt_getrejectreason(socket_);
        fail(std::string("connect: ") + (reason >= SRT_REJC_PREDEFINED ? "rejected, code " + std::to_string(reason)
                                                                       : std::string(srt_rejectreason_str(reason))));
      }
      return;
    }
    if (state_ != State::Sending && state_ != State::Halted) return;
    if (events & SRT_EPOLL_ERR) {
      if (!stopping_) fail("connection closed by the server (or broken)");
      return;
    }
    if ((events & SRT_EPOLL_OUT) && blocked_ && state_ == State::Sending) {
      blocked_ = false;
      ctx_.watch(socket_, SRT_EPOLL_ERR);
      pump();
    }
  }

 private:
  enum class State : uint8_t { Idle, Connecting, Sending, Halted, Done };

  void pump() {
    const int64_t now = now_ns();
    const auto& messages = file_.messages();
    for (;;) {
      const TsFile::Message& m = messages[next_];
      const int64_t due = t0_ns_ + int64_t{loop_} * file_.loop_ms() * kNsPerMs + m.due_us * 1000;
      if (due > now) {
        const auto wait_ms = static_cast<uint64_t>((due - now + kNsPerMs - 1) / kNsPerMs);
        uv_timer_start(&timer_, on_timer, wait_ms, 0);
        return;
      }
      if (!rendered_) {
        file_.render(m, loop_, buf_, cc_);
        rendered_ = true;
      }
      const int rc =
          srt_sendmsg2(socket_, reinterpret_cast<const char*>(buf_.data()), static_cast<int>(buf_.size()), nullptr);
      if (rc == SRT_ERROR) {
        if (srt_getlasterror(nullptr) != SRT_EASYNCSND) return fail(srt_error("srt_sendmsg"));
        if (now - due > kMaxBehindNs)
          return fail("server not reading: " + std::to_string((now - due) / kNsPerMs) + " ms behind");
        blocked_ = true;
        ctx_.watch(socket_, SRT_EPOLL_OUT | SRT_EPOLL_ERR);
        return;
      }
      rendered_ = false;
      stats_.max_late_ns = std::max(stats_.max_late_ns, now - due);
      stats_.bytes_out += buf_.size();
      ++stats_.messages_out;
      if (tracker_) {
        for (const TsFile::FrameKey& f : file_.frames(m))
          tracker_->on_sent(f.type, f.timestamp + loop_ * file_.loop_ms(), now);
      }
      if (++next_ == messages.size()) {
        next_ = 0;
        ++loop_;
        ++stats_.loops;
      }
    }
  }

  static void on_timer(uv_timer_t* timer) noexcept {
    auto* self = static_cast<SrtPublisherClient*>(timer->data);
    if (self->state_ != State::Sending || self->blocked_) return;
    if (!guarded("srt publisher timer", [&] { self->pump(); })) self->fail("internal error while sending");
  }

  void fail(const std::string& reason) {
    mark_failed(stats_, reason);
    stats_.ok = false;
    state_ = State::Done;
    uv_timer_stop(&timer_);
    ctx_.close_socket(std::exchange(socket_, SRT_INVALID_SOCK));
  }

  SrtContext& ctx_;
  SrtUrl url_;
  const TsFile& file_;
  LatencyTracker* tracker_;
  ClientStats stats_;
  State state_ = State::Idle;
  SRTSOCKET socket_ = SRT_INVALID_SOCK;
  uv_timer_t timer_{};
  bool stopping_ = false;
  bool blocked_ = false;
  bool rendered_ = false;  // buf_ holds messages[next_] of loop_, not yet taken by libsrt
  std::vector<uint8_t> buf_;
  std::vector<uint8_t> cc_;
  int64_t t0_ns_ = 0;
  uint32_t loop_ = 0;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<Client> make_srt_reader(SrtContext& ctx, SrtUrl url, const BenchOptions& options,
                                        ClientStats identity) {
  return std::make_unique<SrtReaderClient>(ctx, std::move(url), options, std::move(identity));
}

std::unique_ptr<Client> make_srt_publisher(SrtContext& ctx, SrtUrl url, const BenchOptions&, const TsFile& file,
                                           ClientStats identity, LatencyTracker* tracker) {
  return std::make_unique<SrtPublisherClient>(ctx, std::move(url), file, std::move(identity), tracker);
}

// --- summary ------------------------------------------------------------------------------------

void print_srt_summary(std::FILE* out, const SrtContext& ctx, Mode mode) {
  const SrtTotals& t = ctx.totals();
  std::fprintf(out,
               "srt packets (libsrt): sent %llu, received %llu, retransmitted %llu; lost on the way %llu (sender's "
               "view) / %llu (receiver's view); dropped as too late %llu (sender) / %llu (receiver); rtt max %.2f ms\n",
               (unsigned long long)t.packets_sent, (unsigned long long)t.packets_received,
               (unsigned long long)t.packets_retransmitted, (unsigned long long)t.packets_lost_send,
               (unsigned long long)t.packets_lost_receive, (unsigned long long)t.packets_dropped_send,
               (unsigned long long)t.packets_dropped_receive, t.rtt_ms_max);
  if (mode == Mode::SrtRead) {
    std::vector<double> ttfb = ctx.ttfb_ms();
    std::fprintf(out, "  (srt-read: \"play sent\" above is the SRT connection established)\n");
    std::fprintf(out, "  ttfb ms (connected -> first TS bytes): %s\n", dist_text(distribution(ttfb)).c_str());
    std::fprintf(out, "  MPEG-TS: sync errors %llu, video PES starts %llu\n", (unsigned long long)t.ts_sync_errors,
                 (unsigned long long)t.video_pes);
  }
  if (const TsFile* f = ctx.ts_file) {
    std::vector<double> wait = f->pes_end_wait_ms();
    std::fprintf(out, "  ts file: %llu bytes, loop %u ms (%.2f Mb/s), paced by %s; %zu messages per loop\n",
                 (unsigned long long)f->bytes(), f->loop_ms(), static_cast<double>(f->bytes()) * 8 / 1e3 / f->loop_ms(),
                 f->paced_by_pcr() ? "its PCR" : "its length", f->messages().size());
    std::fprintf(out, "  a frame is whole for a demuxer at the next PES start of its PID, ms after its last byte: %s\n",
                 dist_text(distribution(wait)).c_str());
  }
  if (ctx.drain_ms() > 0)
    std::fprintf(out, "  drain at the end (acknowledged + the peer's latency): %.0f ms\n", ctx.drain_ms());
}

nlohmann::json srt_summary_json(const SrtContext& ctx) {
  const SrtTotals& t = ctx.totals();
  std::vector<double> ttfb = ctx.ttfb_ms();
  nlohmann::json j = {{"packets_sent", t.packets_sent},
                      {"packets_received", t.packets_received},
                      {"packets_retransmitted", t.packets_retransmitted},
                      {"packets_lost_send", t.packets_lost_send},
                      {"packets_lost_receive", t.packets_lost_receive},
                      {"packets_dropped_send", t.packets_dropped_send},
                      {"packets_dropped_receive", t.packets_dropped_receive},
                      {"rtt_ms_max", t.rtt_ms_max},
                      {"ts_sync_errors", t.ts_sync_errors},
                      {"video_pes", t.video_pes},
                      {"ttfb_ms", dist_json(distribution(ttfb))},
                      {"drain_ms", ctx.drain_ms()}};
  if (const TsFile* f = ctx.ts_file) {
    std::vector<double> wait = f->pes_end_wait_ms();
    j["ts_file"] = {{"bytes", f->bytes()},
                    {"loop_ms", f->loop_ms()},
                    {"paced_by_pcr", f->paced_by_pcr()},
                    {"messages_per_loop", f->messages().size()},
                    {"pes_end_wait_ms", dist_json(distribution(wait))}};
  }
  return j;
}

}  // namespace sluice::bench
