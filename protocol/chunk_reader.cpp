#include "protocol/chunk_reader.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/byte_io.hpp"

namespace sluice::protocol {

namespace {

constexpr uint32_t kChunkSizeReservedBit = 0x80000000u;

// Whether the first `n` bytes of `peeked` can still be the big-endian encoding of `value`.
bool prefix_matches(const uint8_t* peeked, size_t n, uint32_t value) {
  uint8_t expected[4];
  store_u32be(expected, value);
  return std::memcmp(peeked, expected, n) == 0;
}

}  // namespace

ChunkReader::ChunkReader(ChunkReaderLimits limits) : limits_(limits) {}

Result<void> ChunkReader::feed(std::span<const uint8_t> in, std::vector<Message>& out) {
  if (state_ == State::Failed) return error_;
  bytes_received_ += in.size();
  auto result = run(in, out);
  if (result) return result;
  // `in` now starts just after the byte that made the stream invalid.
  const uint64_t consumed = bytes_received_ - in.size();
  error_ = std::move(result).error().wrap("chunk stream after " + std::to_string(consumed) + " bytes");
  state_ = State::Failed;
  return error_;
}

Result<void> ChunkReader::run(std::span<const uint8_t>& in, std::vector<Message>& out) {
  while (!in.empty()) {
    Result<void> step;
    switch (state_) {
      case State::Header: step = step_header(in, out); break;
      case State::PeekExtended: step = step_peek(in, out); break;
      case State::Payload: step = step_payload(in, out); break;
      case State::Failed: return error_;
    }
    if (!step) return step;
  }
  return ok();
}

// The size of the whole header that starts at p, judged from the first n bytes seen. It only
// grows as more bytes are seen, and is final once n reaches it.
size_t ChunkReader::header_bytes_needed(const uint8_t* p, size_t n) const {
  if (n == 0) return 1;
  const size_t basic = basic_header_size_from_byte0(p[0]);
  if (n < basic) return basic;
  const auto fmt = static_cast<uint8_t>(p[0] >> 6);
  const size_t fixed = basic + message_header_size(fmt);
  if (fmt == chunk_fmt::kNone) {
    uint8_t unused_fmt = 0;
    uint32_t csid = 0;
    decode_basic_header({p, basic}, unused_fmt, csid);
    const uint32_t index = streams_.find(csid);
    if (index == detail::CsidMap<Stream>::kNone) return fixed;  // on_header rejects it
    return fixed + (type3_ext(streams_[index]) == Type3Ext::Read ? 4 : 0);
  }
  if (n < fixed) return fixed;
  return fixed + (load_u24be(p + basic) == kExtendedTimestampMarker ? 4 : 0);
}

ChunkReader::Type3Ext ChunkReader::type3_ext(const Stream& s) const {
  if (!s.extended) return Type3Ext::None;
  switch (limits_.ext_ts) {
    case ExtendedTimestampOnType3::Never: return Type3Ext::None;
    case ExtendedTimestampOnType3::Always: return Type3Ext::Read;
    case ExtendedTimestampOnType3::Auto: break;
  }
  // Every sender that writes the field writes it on a fmt-3 chunk that starts a message.
  if (!s.in_progress) return Type3Ext::Read;
  switch (continuation_ext_) {
    case ContinuationExtTs::Present: return Type3Ext::Read;
    case ContinuationExtTs::Absent: return Type3Ext::None;
    case ContinuationExtTs::Unknown: break;
  }
  return Type3Ext::Peek;
}

Result<void> ChunkReader::step_header(std::span<const uint8_t>& in, std::vector<Message>& out) {
  // Fast path: the whole header is in the input, parse it in place.
  if (hdr_len_ == 0) {
    const size_t need = header_bytes_needed(in.data(), in.size());
    if (need <= in.size()) {
      const uint8_t* h = in.data();
      in = in.subspan(need);
      return on_header(h, need, out);
    }
  }
  // Slow path: the header is split across feeds; collect it in hdr_.
  for (;;) {
    const size_t need = header_bytes_needed(hdr_, hdr_len_);
    if (hdr_len_ >= need) break;
    if (in.empty()) return ok();
    const size_t take = std::min(need - hdr_len_, in.size());
    std::memcpy(hdr_ + hdr_len_, in.data(), take);
    hdr_len_ = static_cast<uint8_t>(hdr_len_ + take);
    in = in.subspan(take);
  }
  const size_t len = hdr_len_;
  hdr_len_ = 0;
  return on_header(hdr_, len, out);
}

Result<void> ChunkReader::on_header(const uint8_t* h, size_t len, std::vector<Message>& out) {
  ChunkHeader header;
  decode_chunk_header({h, len}, false, header);
  if (header.fmt == chunk_fmt::kNone) {
    const uint32_t index = streams_.find(header.csid);
    if (index == detail::CsidMap<Stream>::kNone) {
      return Error(Errc::Malformed, "fmt 3 chunk on fresh csid " + std::to_string(header.csid));
    }
    cur_ = index;
    Stream& s = streams_[cur_];
    const Type3Ext ext = type3_ext(s);
    if (!s.in_progress) {
      // fmt 3 starting a message: everything inherited, the last delta added again. A present
      // extended field carries that same delta, so its value is not needed.
      s.timestamp += s.delta;
      if (auto started = start_message(s); !started) return started;
    }
    if (ext == Type3Ext::Peek) {
      state_ = State::PeekExtended;
      return ok();
    }
    return begin_chunk(out);
  }
  auto index = stream_for(header.csid);
  if (!index) return std::move(index).error();
  cur_ = *index;
  Stream& s = streams_[cur_];
  // A new header while a message is in progress: the sender gave up on it (SRS errors out
  // here; we drop the partial message and carry on with the new one).
  if (s.in_progress) discard(s);
  apply_message_header(s, header);
  if (auto started = start_message(s); !started) return started;
  return begin_chunk(out);
}

// fmt 0-2 on a csid: fields it does not carry are inherited (zeros on a fresh csid).
void ChunkReader::apply_message_header(Stream& s, const ChunkHeader& h) {
  if (h.fmt == chunk_fmt::kFull) {
    s.timestamp = h.timestamp;
    s.stream_id = h.stream_id;
  } else {
    s.timestamp += h.timestamp;  // modular: timestamps wrap at 2^32
  }
  // After fmt 0 the "delta" a following fmt-3 message adds is the timestamp itself (spec 5.3.1.2).
  s.delta = h.timestamp;
  if (h.fmt <= chunk_fmt::kSameStream) {
    s.length = h.length;
    s.type = h.type;
  }
  s.extended = h.extended;
  s.ext_value = h.timestamp;
}

Result<uint32_t> ChunkReader::stream_for(uint32_t csid) {
  const uint32_t found = streams_.find(csid);
  if (found != detail::CsidMap<Stream>::kNone) return found;
  if (streams_.size() >= limits_.max_chunk_streams) {
    return Error(Errc::LimitExceeded, "csid " + std::to_string(csid) + " would exceed max_chunk_streams " +
                                          std::to_string(limits_.max_chunk_streams));
  }
  const uint32_t index = streams_.insert(csid);
  streams_[index].csid = csid;
  return index;
}

Result<void> ChunkReader::start_message(Stream& s) {
  if (s.length > limits_.max_message_size) {
    return Error(Errc::LimitExceeded, "message length " + std::to_string(s.length) + " on csid " +
                                          std::to_string(s.csid) + " exceeds max_message_size " +
                                          std::to_string(limits_.max_message_size));
  }
  s.in_progress = true;
  return ok();
}

// The header of a chunk is done: work out how much payload it carries. A message of length
// zero completes right here, with no payload bytes to wait for.
Result<void> ChunkReader::begin_chunk(std::vector<Message>& out) {
  Stream& s = streams_[cur_];
  const auto left = static_cast<uint32_t>(s.length - s.body.size());
  chunk_left_ = std::min(chunk_size_, left);
  if (chunk_left_ == 0) {
    state_ = State::Header;
    return complete(s, out);
  }
  state_ = State::Payload;
  return ok();
}

// First continuation chunk after an extended header, in Auto mode: are the next 4 bytes the
// extended timestamp again, or payload? Decide as SRS does, then lock the answer in.
Result<void> ChunkReader::step_peek(std::span<const uint8_t>& in, std::vector<Message>& out) {
  const Stream& s = streams_[cur_];
  // Writers repeat either the governing header's value or the message's absolute timestamp.
  const uint32_t a = s.ext_value;
  const uint32_t b = s.timestamp;
  if (peek_len_ == 0 && in.size() >= 4) {
    const uint32_t v = load_u32be(in.data());
    const bool present = v == a || v == b;
    continuation_ext_ = present ? ContinuationExtTs::Present : ContinuationExtTs::Absent;
    if (present) in = in.subspan(4);
    return begin_chunk(out);
  }
  while (peek_len_ < 4 && !in.empty()) {
    peek_[peek_len_++] = in[0];
    in = in.subspan(1);
    if (!prefix_matches(peek_, peek_len_, a) && !prefix_matches(peek_, peek_len_, b)) {
      // Payload after all. The peeked bytes must go through the parser again (they may run past
      // this chunk into the next header); with the decision locked this cannot come back here.
      continuation_ext_ = ContinuationExtTs::Absent;
      uint8_t replay_bytes[4];
      const size_t replay_len = peek_len_;
      std::memcpy(replay_bytes, peek_, replay_len);
      peek_len_ = 0;
      if (auto begun = begin_chunk(out); !begun) return begun;
      std::span<const uint8_t> replay(replay_bytes, replay_len);
      return run(replay, out);
    }
  }
  if (peek_len_ < 4) return ok();
  peek_len_ = 0;
  continuation_ext_ = ContinuationExtTs::Present;
  return begin_chunk(out);
}

Result<void> ChunkReader::step_payload(std::span<const uint8_t>& in, std::vector<Message>& out) {
  Stream& s = streams_[cur_];
  const size_t n = std::min<size_t>(chunk_left_, in.size());
  if (auto appended = append(s, in.first(n)); !appended) return appended;
  in = in.subspan(n);
  chunk_left_ -= static_cast<uint32_t>(n);
  if (chunk_left_ != 0) return ok();
  state_ = State::Header;
  if (s.body.size() == s.length) return complete(s, out);
  return ok();
}

// Copies received bytes into the message body. Capacity grows geometrically with the bytes
// actually received and never beyond the declared length, so a lying length costs nothing and
// a finished body's capacity equals its size (it is handed out without a copy).
Result<void> ChunkReader::append(Stream& s, std::span<const uint8_t> bytes) {
  if (buffered_bytes_ + bytes.size() > limits_.max_buffered_bytes) {
    return Error(Errc::LimitExceeded,
                 "partial messages would exceed max_buffered_bytes " + std::to_string(limits_.max_buffered_bytes));
  }
  const size_t need = s.body.size() + bytes.size();
  const size_t capacity = s.body.capacity();
  if (need > capacity) {
    const size_t grown = std::min<size_t>(s.length, std::max(need, 2 * capacity));
    s.body.reserve(grown);
    reserved_bytes_ += s.body.capacity() - capacity;
  }
  s.body.insert(s.body.end(), bytes.begin(), bytes.end());
  buffered_bytes_ += bytes.size();
  return ok();
}

Result<void> ChunkReader::complete(Stream& s, std::vector<Message>& out) {
  Message m;
  m.csid = s.csid;
  m.type = s.type;
  m.timestamp = s.timestamp;
  m.stream_id = s.stream_id;
  buffered_bytes_ -= s.body.size();
  reserved_bytes_ -= s.body.capacity();
  // An empty body needs no Payload allocation: a default Slice is empty.
  if (!s.body.empty()) m.payload = Slice::adopt(std::move(s.body));
  s.body = std::vector<uint8_t>();  // frees it (assigning {} would keep the capacity)
  s.in_progress = false;
  if (m.type == msg_type::kSetChunkSize || m.type == msg_type::kAbort) {
    if (auto applied = apply_control(m); !applied) return applied;
  }
  out.push_back(std::move(m));
  return ok();
}

// Set Chunk Size and Abort change how the following bytes parse, so they take effect here, at
// the message boundary, before another byte is read.
Result<void> ChunkReader::apply_control(const Message& m) {
  const char* name = m.type == msg_type::kSetChunkSize ? "Set Chunk Size" : "Abort";
  if (m.payload.size() < 4) {
    return Error(Errc::Malformed, std::string(name) + " payload of " + std::to_string(m.payload.size()) + " bytes");
  }
  const uint32_t value = load_u32be(m.payload.data());
  if (m.type == msg_type::kAbort) {
    const uint32_t index = streams_.find(value);
    if (index != detail::CsidMap<Stream>::kNone) discard(streams_[index]);
    return ok();
  }
  if (value == 0 || (value & kChunkSizeReservedBit) != 0) {
    return Error(Errc::BadChunkSize, "Set Chunk Size " + std::to_string(value));
  }
  if (value > limits_.max_chunk_size) {
    return Error(Errc::LimitExceeded, "Set Chunk Size " + std::to_string(value) + " exceeds max_chunk_size " +
                                          std::to_string(limits_.max_chunk_size));
  }
  chunk_size_ = value;
  return ok();
}

void ChunkReader::discard(Stream& s) {
  buffered_bytes_ -= s.body.size();
  reserved_bytes_ -= s.body.capacity();
  s.body = std::vector<uint8_t>();  // frees it (assigning {} would keep the capacity)
  s.in_progress = false;
}

}  // namespace sluice::protocol
