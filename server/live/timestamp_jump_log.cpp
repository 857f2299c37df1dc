#include "server/live/timestamp_jump_log.hpp"

#include "server/io/logging.hpp"

namespace sluice::server {

void log_timestamp_jump(std::string_view who, std::string_view key, const media::TimestampCorrector::Jump& j,
                        LogRateLimit& limit, uint64_t now_ms) {
  GuardCounters::bump(GuardEvent::TimestampJump);
  uint64_t suppressed = 0;
  if (!limit.allow(now_ms, suppressed)) return;
  SLUICE_LOG_WARN("{} event=timestamp_jump stream={} kind={} from={} to={} step_ms={} rebased_to={} suppressed={}", who,
                  key, j.kind == media::FrameKind::Audio ? "audio" : "video", j.from, j.to, j.step_ms, j.output,
                  suppressed);
}

}  // namespace sluice::server
