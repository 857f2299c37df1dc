// UdpPort: the one UDP socket through which a worker loop's WebRTC sessions send and receive
// everything (STUN, DTLS, SRTP and SRTCP: BUNDLE and rtcp-mux, docs/webrtc.md). Datagrams are read
// into the loop's buffer and handed over synchronously with their source. Sends are queued and go
// out in sendmmsg batches of up to kBatch datagrams (one system call where a frame to 200 players
// took 1000): when the queue is full, and before the loop waits for I/O (uv_prepare) and after it
// (uv_check), so nothing waits longer than the loop turn it was sent in. A full socket buffer
// drops what is left of the batch, which is what UDP would do a hop later anyway, and RTP's NACKs
// repair.
//
// Within a batch, consecutive datagrams to one peer that are all of the first one's size but the
// last (no larger) go as one UDP GSO message (UDP_SEGMENT, Linux 4.18): the kernel builds and
// routes one buffer and cuts it into the datagrams at the device, where a datagram each costs
// that work once per datagram (docs/benchmarks.md, "SRTP on OpenSSL and UDP GSO"). A player's fragments of one H.264
// unit are such a run (media/rtp/h264_packetizer.hpp). The receiver gets the same datagrams
// either way. A kernel or device that refuses a GSO message turns GSO off for the port (that
// message's datagrams count as dropped); SLUICE_WEBRTC_GSO=0 in the environment turns it off.
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "base/result.hpp"
#include "protocol/proxy_header.hpp"

namespace sluice::server {

// A peer's address as sendto() takes it, and as the STUN answer and the logs write it.
struct UdpPeer {
  sockaddr_storage address{};
  protocol::Endpoint endpoint;

  static UdpPeer from(const sockaddr* address);
  // A key for the table of sessions by source address.
  std::string key() const { return endpoint.to_string(); }
};

class UdpPort {
 public:
  using OnDatagram = std::function<void(std::span<const uint8_t>, const UdpPeer&)>;

  // SLUICE_WEBRTC_BATCH=1 in the environment sends each datagram at once (for comparisons);
  // SLUICE_WEBRTC_GSO=0 sends each as a message of its own.
  UdpPort(uv_loop_t* loop, OnDatagram on_datagram);
  ~UdpPort() = default;
  UdpPort(const UdpPort&) = delete;
  UdpPort& operator=(const UdpPort&) = delete;

  // Binds host:port and starts reading; the port bound (the kernel's choice for port 0).
  Result<uint16_t> open(const std::string& host, uint16_t port);
  static constexpr size_t kBatch = 64;
  static constexpr size_t kMaxDatagram = 2048;
  static constexpr size_t kMaxGsoBytes = 65000;  // under UDP's 65,507 bytes of payload per message

  // Queues the datagram (copied); false when the port is closed or it is larger than
  // kMaxDatagram. Datagrams the kernel refuses at the flush are counted in send_drops().
  bool send(std::span<const uint8_t> datagram, const UdpPeer& to);
  // Sends what is queued now.
  void flush();
  void close();

  uint64_t datagrams_in() const { return in_; }
  uint64_t datagrams_out() const { return out_; }
  uint64_t send_calls() const { return send_calls_; }      // sendmmsg calls made
  uint64_t gso_messages() const { return gso_messages_; }  // messages of more than one datagram sent
  uint64_t send_drops() const { return send_drops_; }
  bool gso() const { return gso_; }

 private:
  // Fills msgs_ from the queue, a run of datagrams per message where GSO allows; their count.
  size_t build_messages();
  static void on_alloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void on_recv(uv_udp_t* h, ssize_t n, const uv_buf_t* buf, const sockaddr* from, unsigned flags);

  uv_loop_t* loop_;
  OnDatagram on_datagram_;
  uv_udp_t udp_{};
  uv_prepare_t before_poll_{};
  uv_check_t after_poll_{};
  int fd_ = -1;
  // The queue: datagram i is data_[i] (sizes in iov_), to to_[i]. Message m (at a flush) is
  // segments_[m] datagrams from iov_ on, with its UDP_SEGMENT size in control_[m].
  size_t queued_ = 0;
  size_t batch_ = kBatch;  // flush when this many are queued
  bool gso_ = true;
  uint8_t data_[kBatch][kMaxDatagram];
  iovec iov_[kBatch];
  sockaddr_storage to_[kBatch];
  mmsghdr msgs_[kBatch];
  size_t segments_[kBatch];
  alignas(cmsghdr) uint8_t control_[kBatch][CMSG_SPACE(sizeof(uint16_t))];
  bool open_ = false;
  uint64_t in_ = 0, out_ = 0, send_drops_ = 0, send_calls_ = 0, gso_messages_ = 0;
};

}  // namespace sluice::server
