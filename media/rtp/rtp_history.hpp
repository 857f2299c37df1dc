// The sending side of one track of a stream, shared by its players (docs/rtp.md, "Sending to
// many players"): RtpHistory numbers each payload once with a source sequence number and keeps
// the last ones for retransmission; each player's SequenceRewriter maps source numbers to its
// own gapless ones and back, so a player that skipped frames (the slow-player rule) sees no loss,
// and its NACKs still find the packets in the one shared history.
//
// Rules:
//  1. RtpHistory holds the last `capacity` payloads by source sequence number (slices of the
//     frames' shared buffers: no copy); an older or never-numbered one is not found.
//  2. SequenceRewriter::rewrite() is called for each packet a player sends, in source order; a
//     source number past the last one + 1 (packets the player skipped) shifts its offset, so the
//     player's numbers stay consecutive. It keeps the last kEpochs offsets: a NACK for a number
//     sent before those, or more than kWindow behind the last, finds nothing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "base/bytes.hpp"

namespace sluice::media::rtp {

struct HistoryPacket {
  uint16_t sequence = 0;   // source sequence number
  uint32_t timestamp = 0;  // source RTP time
  bool marker = false;
  Slice payload;
};

class RtpHistory {
 public:
  explicit RtpHistory(size_t capacity = 1024, uint16_t first_sequence = 0);

  // Numbers and keeps a payload; returns its source sequence number.
  uint16_t add(uint32_t timestamp, bool marker, Slice payload);
  // The packet numbered `sequence`, while it is kept.
  const HistoryPacket* find(uint16_t sequence) const;
  uint16_t next_sequence() const { return next_; }

 private:
  std::vector<HistoryPacket> ring_;
  std::vector<bool> used_;
  uint16_t next_;
};

class SequenceRewriter {
 public:
  static constexpr size_t kEpochs = 16;
  static constexpr uint16_t kWindow = 8192;

  // `first` is the player's first sequence number (random, RFC 3550 5.1).
  explicit SequenceRewriter(uint16_t first) : first_(first) {}

  // The player's number for the next packet it sends, whose source number is `source`.
  uint16_t rewrite(uint16_t source);
  // The source number of a packet this player was sent as `player` (for its NACKs).
  std::optional<uint16_t> source_of(uint16_t player) const;
  // Packets the player did not get because they were skipped (not counting retransmissions).
  uint64_t skipped() const { return skipped_; }

 private:
  struct Epoch {
    uint64_t start = 0;   // the index (0 = the player's first packet) of its first packet
    uint16_t offset = 0;  // player - source
  };
  uint16_t first_;
  bool started_ = false;
  uint16_t last_source_ = 0;
  uint16_t last_player_ = 0;
  uint64_t sent_ = 0;
  std::array<Epoch, kEpochs> epochs_{};
  size_t epoch_count_ = 0;  // total ever; the last kEpochs are kept
  uint64_t skipped_ = 0;
};

}  // namespace sluice::media::rtp
