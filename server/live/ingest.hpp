// One received RTMP message (a publisher's, or a pull's from its upstream) as the frame a hub fans
// out: "@setDataFrame onMetaData" kept as "onMetaData", the timestamp made continuous
// (media/timestamp_corrector.hpp). The payload is never copied.
#pragma once

#include <optional>

#include "media/frame.hpp"
#include "media/timestamp_corrector.hpp"
#include "protocol/message.hpp"

namespace sluice::server {

media::FramePtr ingest_frame(protocol::Message& m, media::TimestampCorrector& timestamps,
                             std::optional<media::TimestampCorrector::Jump>& jump);

}  // namespace sluice::server
