#include "server/srt/srt_ts_io.hpp"

#include <algorithm>

#include "server/srt/srt_socket.hpp"

namespace sluice::server {

namespace {
constexpr size_t kMaxMessage = 1500;  // more than any SRT payload (1456 at most)

// The close reason of a failed read or send. A peer that closes is "closed by peer"; one that went
// silent is found broken by libsrt, which may already have removed the socket by the time the loop
// uses it ("Invalid socket ID" would read like a bug of ours).
std::string srt_io_error(const char* call, int code) {
  if (code == SRT_ECONNLOST) return "closed by peer";
  if (code == SRT_EINVSOCK) return "connection lost (libsrt had already closed it)";
  return srt_error(call);
}
}  // namespace

SrtTsReceiver::Outcome SrtTsReceiver::receive(SRTSOCKET s,
                                              const std::function<bool(media::ts::TsDemuxer::Frame&)>& on_frame,
                                              std::string& error) {
  uint8_t buf[kMaxMessage];
  for (;;) {
    // Asking first spares the read that would fail: libsrt 1.5 raises and catches a C++ exception
    // inside for every "would block", a few µs each, once per drain of every connection.
    if (!srt_readable(s)) return Outcome::Drained;
    const int n = srt_recvmsg(s, reinterpret_cast<char*>(buf), sizeof buf);
    if (n == SRT_ERROR) {
      const int code = srt_getlasterror(nullptr);
      if (code == SRT_EASYNCRCV) return Outcome::Drained;
      error = srt_io_error("srt_recvmsg", code);
      return Outcome::Closed;
    }
    if (n <= 0) return Outcome::Drained;
    bytes_ += static_cast<uint64_t>(n);
    frames_.clear();
    Result<void> fed = demuxer_.feed({buf, static_cast<size_t>(n)}, frames_);
    for (auto& f : frames_) {
      if (!on_frame(f)) return Outcome::Stopped;
    }
    if (!fed) {
      error = "bad MPEG-TS: " + fed.error().message();
      return Outcome::Bad;
    }
  }
}

SrtTsSender::Outcome SrtTsSender::send(SRTSOCKET s, size_t payload, std::string& error) {
  while (sent_ < pending_.size()) {
    const size_t n = std::min(payload, pending_.size() - sent_);
    const int rc =
        srt_sendmsg2(s, reinterpret_cast<const char*>(pending_.data() + sent_), static_cast<int>(n), nullptr);
    if (rc == SRT_ERROR) {
      const int code = srt_getlasterror(nullptr);
      if (code == SRT_EASYNCSND) return Outcome::Blocked;
      error = srt_io_error("srt_sendmsg", code);
      return Outcome::Failed;
    }
    sent_ += n;
    bytes_ += n;
  }
  pending_.clear();
  sent_ = 0;
  return Outcome::Sent;
}

}  // namespace sluice::server
