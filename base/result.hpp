// Result<T> and Error: how every parser and state machine in Sluice reports failure.
// Nothing here throws; errors carry a code from one table plus human context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sluice {

// One table of error codes: (name, short_name, description).
#define SLUICE_ERRC_TABLE(XX)                                                \
  XX(Ok, "ok", "no error")                                                   \
  XX(NeedMoreData, "need_more_data", "input ended inside a structure")       \
  XX(Truncated, "truncated", "input ended inside a value")                   \
  XX(Malformed, "malformed", "input violates the format")                    \
  XX(LimitExceeded, "limit_exceeded", "a configured limit was exceeded")     \
  XX(Unsupported, "unsupported", "valid input that Sluice does not support") \
  XX(BadVersion, "bad_version", "unsupported RTMP handshake version")        \
  XX(BadDigest, "bad_digest", "handshake digest did not verify")             \
  XX(BadChunkSize, "bad_chunk_size", "invalid Set Chunk Size value")         \
  XX(BadCommand, "bad_command", "command message is not well formed")        \
  XX(BadState, "bad_state", "message not allowed in the current state")      \
  XX(Rejected, "rejected", "the application rejected the request")           \
  XX(Closed, "closed", "the session is closed")                              \
  XX(NotFound, "not_found", "the named thing does not exist")                \
  XX(Io, "io", "input/output error")                                         \
  XX(Config, "config", "invalid configuration")

enum class Errc : uint8_t {
#define SLUICE_ERRC_ENUM(name, short_name, description) name,
  SLUICE_ERRC_TABLE(SLUICE_ERRC_ENUM)
#undef SLUICE_ERRC_ENUM
};

constexpr std::string_view errc_name(Errc code) {
  switch (code) {
#define SLUICE_ERRC_NAME(name, short_name, description) \
  case Errc::name: return short_name;
    SLUICE_ERRC_TABLE(SLUICE_ERRC_NAME)
#undef SLUICE_ERRC_NAME
  }
  return "unknown";
}

struct Error {
  Errc code = Errc::Ok;
  std::string context;

  Error() = default;
  Error(Errc c, std::string ctx = {}) : code(c), context(std::move(ctx)) {}

  // Adds outer context, innermost last: "publish live/x: amf0 string at byte 12: truncated".
  Error wrap(std::string_view outer) && {
    if (context.empty()) {
      context = std::string(outer);
    } else {
      context = std::string(outer) + ": " + context;
    }
    return std::move(*this);
  }

  std::string message() const {
    std::string out(errc_name(code));
    if (!context.empty()) {
      out += ": ";
      out += context;
    }
    return out;
  }
};

// A small std::expected stand-in (C++20 has none).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const& { return error_; }
  Error&& error() && { return std::move(error_); }

 private:
  Error error_;
  bool ok_ = true;
};

inline Result<void> ok() { return {}; }

}  // namespace sluice
