#include "config/srt_schema.hpp"

#include <string>

#include "config/access_schema.hpp"

namespace sluice::config {

namespace {

using std::chrono::milliseconds;

// libsrt's bounds on a passphrase (SRTO_PASSPHRASE).
void check_passphrase(FieldReader& r, const Field& self, const Secret& p) {
  if (p.value.empty()) return;
  if (p.value.size() < 10 || p.value.size() > 79) {
    r.error(self, "the passphrase must be 10 to 79 characters (it has " + std::to_string(p.value.size()) + ")");
  }
}

void read_latency(FieldReader& r, const Field& f, Duration& out) {
  r.read_duration(f, out, milliseconds(20), milliseconds(10'000), false);
}

}  // namespace

void load_srt(FieldReader& r, const Field& self, SrtConfig& srt) {
  Section s(r, self,
            {"listen", "latency", "passphrase", "passphrase_file", "passphrase_env", "pbkeylen", "max_bandwidth",
             "payload_size", "peer_idle_timeout"});
  if (!s.valid()) return;
  if (auto f = s.take("listen")) r.read_listen(*f, srt.listen);
  if (auto f = s.take("latency")) read_latency(r, *f, srt.latency);
  load_secret(r, s, self, "passphrase", srt.passphrase);
  check_passphrase(r, self, srt.passphrase);
  if (auto f = s.take("pbkeylen")) {
    if (r.read_uint(*f, srt.pbkeylen, 16, 32) && srt.pbkeylen != 16 && srt.pbkeylen != 24 && srt.pbkeylen != 32) {
      r.error(*f, "must be 16, 24 or 32 (AES-128, -192, -256)");
    }
  }
  if (auto f = s.take("max_bandwidth")) r.read_size(*f, srt.max_bandwidth, 0, uint64_t{1} << 40);
  if (auto f = s.take("payload_size")) {
    if (r.read_uint(*f, srt.payload_size, 188, 1456) && srt.payload_size % 188 != 0) {
      r.error(*f, "must be a multiple of 188 (whole MPEG-TS packets): 1316 is 7 of them");
    }
  }
  if (auto f = s.take("peer_idle_timeout")) {
    r.read_duration(*f, srt.peer_idle_timeout, std::chrono::seconds(1), std::chrono::seconds(60), false);
  }
}

void load_app_srt(FieldReader& r, const Field& self, SrtAppConfig& srt) {
  Section s(r, self, {"latency", "passphrase", "passphrase_file", "passphrase_env"});
  if (!s.valid()) return;
  if (auto f = s.take("latency")) {
    Duration latency{120};
    read_latency(r, *f, latency);
    srt.latency = latency;
  }
  load_secret(r, s, self, "passphrase", srt.passphrase);
  check_passphrase(r, self, srt.passphrase);
}

}  // namespace sluice::config
