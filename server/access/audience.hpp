// apps.NAME.limits: publishers of an app, players of an app and of one stream, counted over every
// worker and both protocols. A publisher or player holds a Seat for as long as it exists.
#pragma once

#include <cstdint>
#include <string>

#include "config/access.hpp"

namespace sluice::server {

enum class AudienceRole { Publisher, Player };

class Seat {
 public:
  Seat() = default;
  ~Seat();
  Seat(Seat&& o) noexcept;
  Seat& operator=(Seat&& o) noexcept;
  Seat(const Seat&) = delete;
  Seat& operator=(const Seat&) = delete;

  // Takes a seat for `role` on app/stream under `limits`; on refusal returns false and says which
  // limit in `why` ("apps.live.limits.players_per_stream=50").
  bool take(AudienceRole role, const std::string& app, const std::string& stream, const config::AppLimits& limits,
            std::string& why);
  void release();
  bool held() const { return held_; }

 private:
  AudienceRole role_ = AudienceRole::Player;
  std::string app_;
  std::string stream_key_;
  bool held_ = false;
};

}  // namespace sluice::server
