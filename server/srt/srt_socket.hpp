// The libsrt calls every SRT socket of Sluice makes the same way: the options from the
// configuration (docs/srt.md, "Configuration"), libsrt's last error as text, and the peer's
// address in the forms the access rules and the logs use.
#pragma once

#include <srt/srt.h>

#include <chrono>
#include <string>

#include "base/result.hpp"
#include "config/srt.hpp"
#include "server/io/net_address.hpp"

namespace sluice::server {

// libsrt's own log lines (it prints to stderr by default) go to Sluice's log at debug level, with
// proto=srt: what libsrt reports is in Sluice's own lines (srt_close's reason, srt_rejected).
void route_srt_logs();

// "srt_bind: Operation not supported: ..." from the last libsrt call on this thread.
std::string srt_error(const char* call);

// Live mode, non-blocking both ways, and the server's latency, payload size, bandwidth cap, idle
// timeout and passphrase (with pbkeylen). On a listener they pass to every accepted socket.
Result<void> apply_srt_options(SRTSOCKET s, const config::SrtConfig& c);
// An app's own (inside the listen callback, on the socket being accepted).
bool set_srt_latency(SRTSOCKET s, std::chrono::milliseconds latency);
bool set_srt_passphrase(SRTSOCKET s, const std::string& passphrase);

// Whether a read would find a message or the socket's error (libsrt's SRTO_EVENT), so that the
// read that would block is never made.
bool srt_readable(SRTSOCKET s);

// The peer of a connected SRT socket ("1.2.3.4:5678" and the raw address).
PeerAddress srt_peer(SRTSOCKET s);

}  // namespace sluice::server
