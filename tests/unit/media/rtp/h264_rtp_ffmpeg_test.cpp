// media/rtp/h264_depacketizer against ffmpeg's own RTP muxer, run only with SLUICE_RTP_FFMPEG set
// (tests/CMakeLists.txt sets it for the suite; about 3 s, most of it ffmpeg sending in real
// time): libx264 encodes a 2 s clip as Annex B with an AUD before each access unit and the SPS
// and PPS before each keyframe, ffmpeg sends it with `-f rtp` (single NAL units, STAP-A, FU-A) to
// a UDP socket of this test, and the depacketiser must give back every access unit exactly: its
// NAL units, in order, byte for byte (the parameter sets in the sequence header, the AUDs left
// out), at 40 ms steps. The same packets also go through ReorderBuffer shuffled, and
// through the packetiser and depacketiser again.
#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "media/codec/nal_packer.hpp"
#include "media/rtp/h264_depacketizer.hpp"
#include "media/rtp/h264_nal.hpp"
#include "media/rtp/h264_packetizer.hpp"
#include "media/rtp/reorder_buffer.hpp"
#include "media/rtp/rtp_packet.hpp"
#include "unit/media/ffprobe_packets.hpp"
#include "unit/media/tool_files.hpp"

using namespace sluice;
using namespace sluice::media;
using namespace sluice::media::rtp;
using Bytes = std::vector<uint8_t>;

namespace {

struct UdpSocket {
  int fd = -1;
  uint16_t port = 0;
  UdpSocket() {
    fd = socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    int size = 8 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    socklen_t len = sizeof a;
    REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    port = ntohs(a.sin_port);
  }
  ~UdpSocket() {
    if (fd >= 0) close(fd);
  }
};

// Every datagram ffmpeg sends to `rtp` until it exits and the socket stays quiet.
std::vector<Bytes> capture(const std::string& cmd, UdpSocket& rtp) {
  std::atomic<bool> done{false};
  std::atomic<bool> ok{false};
  std::thread sender([&] {
    ok = sluice::test::run(cmd).has_value();
    done = true;
  });
  std::vector<Bytes> packets;
  int quiet = 0;
  while (!done || quiet < 3) {
    pollfd p{rtp.fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) {
      if (done) ++quiet;
      continue;
    }
    Bytes buf(65536);
    const ssize_t n = recv(rtp.fd, buf.data(), buf.size(), 0);
    if (n <= 0) continue;
    buf.resize(static_cast<size_t>(n));
    packets.push_back(std::move(buf));
  }
  sender.join();
  REQUIRE(ok);
  return packets;
}

// The access units of an Annex B stream that has an AUD before each: their NAL units without
// AUDs and parameter sets, each as it is.
std::vector<std::vector<Bytes>> access_units(const Bytes& annexb) {
  std::vector<std::vector<Bytes>> aus;
  for (auto nal : split_annexb(annexb)) {
    const uint8_t type = nal[0] & 0x1F;
    if (type == kNalAud) {
      aus.emplace_back();
      continue;
    }
    if (aus.empty() || type == kNalSps || type == kNalPps) continue;
    aus.back().emplace_back(nal.begin(), nal.end());
  }
  return aus;
}

// The NAL units of a frame body (legacy AVC, 4-byte lengths).
std::vector<Bytes> nal_units(const Bytes& body) {
  std::vector<Bytes> out;
  for_each_avcc_nal(std::span<const uint8_t>(body).subspan(5), 4,
                    [&](std::span<const uint8_t> n) { out.emplace_back(n.begin(), n.end()); });
  return out;
}

void check_frames(const std::vector<DepacketizedFrame>& frames, const std::vector<std::vector<Bytes>>& aus) {
  std::vector<const DepacketizedFrame*> pictures;
  size_t headers = 0;
  for (const auto& f : frames) {
    if (f.sequence_header) {
      ++headers;
    } else {
      pictures.push_back(&f);
    }
  }
  CHECK(headers == 1);  // the same SPS and PPS before each keyframe: one sequence header
  REQUIRE(pictures.size() == aus.size());
  for (size_t i = 0; i < aus.size(); ++i) {
    CAPTURE(i);
    CHECK(nal_units(pictures[i]->body) == aus[i]);
    CHECK(pictures[i]->timestamp_ms == i * 40);
    CHECK(pictures[i]->keyframe == (i % 25 == 0));
  }
}

}  // namespace

TEST_CASE("ffmpeg's RTP packets of a libx264 clip give back its access units exactly") {
  if (!getenv("SLUICE_RTP_FFMPEG")) return;
  if (sluice::test::skipped_without(sluice::test::have_ffmpeg_tools(), "ffmpeg")) return;
  sluice::test::TempDir dir("sluice-rtp");
  const std::string clip = dir.file("clip.h264");
  // Keyframes of ~20 KB (FU-A), small P-frames (single NAL units), two slices per picture.
  sluice::test::ffmpeg(
      "-f lavfi -i testsrc=size=320x240:rate=25:duration=2 -c:v libx264 -preset ultrafast -bf 0 -g 25 "
      "-x264-params aud=1:slices=2 -pix_fmt yuv420p '" +
      clip + "'");
  const Bytes annexb = sluice::test::read_file(clip);
  const auto aus = access_units(annexb);
  REQUIRE(aus.size() == 50);

  UdpSocket rtp, rtcp;
  const std::string cmd = "ffmpeg -v error -re -i '" + clip +
                          "' -c copy -f rtp -pkt_size 1000 'rtp://127.0.0.1:" + std::to_string(rtp.port) +
                          "?rtcpport=" + std::to_string(rtcp.port) + "' >/dev/null 2>&1";
  const auto packets = capture(cmd, rtp);
  REQUIRE(packets.size() > aus.size());

  size_t stap = 0, fu = 0, single = 0;
  H264Depacketizer d;
  std::vector<DepacketizedFrame> frames;
  for (const auto& p : packets) {
    auto v = parse_rtp(p);
    REQUIRE(v.ok());
    REQUIRE(!v->payload.empty());
    const uint8_t type = v->payload[0] & 0x1F;
    stap += type == kNalStapA;
    fu += type == kNalFuA;
    single += type < 24;
    d.push(*v, frames);
  }
  d.flush(frames);
  MESSAGE("ffmpeg sent " << packets.size() << " packets: " << single << " single, " << stap << " STAP-A, " << fu
                         << " FU-A");
  CHECK(fu > 0);
  CHECK(stap > 0);
  CHECK(d.stats().lost_packets == 0);
  CHECK(d.stats().damaged_frames == 0);
  check_frames(frames, aus);

  {
    INFO(
        "shuffled by up to 8 places (the first packet first: it sets where the stream starts), through the "
        "reorder buffer");
    std::vector<size_t> order(packets.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::mt19937 rng(36);
    for (size_t i = 1; i + 8 < order.size(); i += 8) std::shuffle(order.begin() + i, order.begin() + i + 8, rng);
    ReorderBuffer reorder;
    H264Depacketizer again;
    std::vector<DepacketizedFrame> out;
    std::vector<ReorderBuffer::Packet> ready;
    for (size_t i : order) {
      auto v = parse_rtp(packets[i]);
      reorder.push(v->sequence, Slice::copy_of(packets[i]), 0, ready);
    }
    reorder.flush(ready);
    for (const auto& p : ready) again.push(*parse_rtp(p.bytes.span()), out);
    again.flush(out);
    CHECK(reorder.stats().late == 0);
    check_frames(out, aus);
  }

  {
    INFO("Sluice's packetiser and depacketiser keep them too");
    H264Packetizer packetizer(1200);
    H264Depacketizer again;
    std::vector<DepacketizedFrame> out;
    uint16_t seq = 65000;
    for (const auto& f : frames) {
      PacketizedFrame pf;
      if (!packetizer.packetize(f.body, f.timestamp_ms, pf)) continue;
      for (size_t i = 0; i < pf.payloads.size(); ++i) {
        Bytes p(kRtpFixedHeaderSize);
        write_fixed_header(p.data(), i + 1 == pf.payloads.size(), 96, seq++, pf.timestamp, 1);
        p.insert(p.end(), pf.payloads[i].span().begin(), pf.payloads[i].span().end());
        again.push(*parse_rtp(p), out);
      }
    }
    check_frames(out, aus);
    CHECK(packetizer.stats().frames == 50);
  }
}
