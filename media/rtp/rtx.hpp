// RTX (RFC 4588; docs/rtp.md, "RTX"): a retransmission sent on its own SSRC and payload type,
// its payload the original sequence number (2 bytes) and then the original payload. Browsers
// send NACKed packets this way when the answer took rtx, and also send RTX packets of padding
// alone to probe the bandwidth.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "media/rtp/rtp_packet.hpp"

namespace sluice::media::rtp {

// The original packet of an RTX packet `rtx` (read from `bytes`): its header (CSRCs and
// extension kept) with the media payload type, SSRC and original sequence number, and the
// original payload, padding left out. False for a packet too short to carry a sequence number
// (a padding probe): nothing to restore.
bool restore_rtx(std::span<const uint8_t> bytes, const RtpPacketView& rtx, uint8_t media_payload_type,
                 uint32_t media_ssrc, std::vector<uint8_t>& out);

}  // namespace sluice::media::rtp
