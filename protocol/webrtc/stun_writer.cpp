#include "protocol/webrtc/stun_writer.hpp"

#include <algorithm>

#include "base/byte_io.hpp"

namespace sluice::protocol::webrtc {
namespace {

constexpr size_t kAttributeHeader = 4;
constexpr size_t kMaxReason = 128;

}  // namespace

StunWriter::StunWriter(uint16_t method, StunClass kind, const StunTransactionId& transaction_id) {
  out_.reserve(128);
  ByteWriter w(out_);
  w.u16be(stun_message_type(method, kind));
  w.u16be(0);
  w.u32be(kStunMagicCookie);
  w.bytes(transaction_id);
}

void StunWriter::set_length(size_t length) {
  out_[2] = static_cast<uint8_t>(length >> 8);
  out_[3] = static_cast<uint8_t>(length);
}

void StunWriter::add(uint16_t type, std::span<const uint8_t> value) {
  ByteWriter w(out_);
  w.u16be(type);
  w.u16be(static_cast<uint16_t>(value.size()));
  w.bytes(value);
  out_.resize((out_.size() + 3) & ~size_t{3}, 0);
  set_length(out_.size() - kStunHeaderSize);
}

void StunWriter::add_string(uint16_t type, std::string_view value) {
  add(type, std::span(reinterpret_cast<const uint8_t*>(value.data()), value.size()));
}

void StunWriter::add_u32(uint16_t type, uint32_t value) {
  uint8_t b[4];
  store_u32be(b, value);
  add(type, b);
}

void StunWriter::add_u64(uint16_t type, uint64_t value) {
  uint8_t b[8];
  store_u32be(b, static_cast<uint32_t>(value >> 32));
  store_u32be(b + 4, static_cast<uint32_t>(value));
  add(type, b);
}

void StunWriter::add_xor_address(uint16_t type, const Endpoint& endpoint) {
  // The mask is the cookie and the transaction id: out_[4..20) (stun.cpp, read_xor_address).
  const size_t address_size = endpoint.address.v6 ? 16 : 4;
  uint8_t value[20] = {0, static_cast<uint8_t>(endpoint.address.v6 ? 2 : 1),
                       static_cast<uint8_t>((endpoint.port >> 8) ^ (kStunMagicCookie >> 24)),
                       static_cast<uint8_t>((endpoint.port & 0xFF) ^ ((kStunMagicCookie >> 16) & 0xFF))};
  for (size_t i = 0; i < address_size; ++i) value[4 + i] = endpoint.address.bytes[i] ^ out_[4 + i];
  add(type, std::span(value, 4 + address_size));
}

void StunWriter::add_error_code(uint16_t code, std::string_view reason) {
  std::vector<uint8_t> value = {0, 0, static_cast<uint8_t>(code / 100 & 7), static_cast<uint8_t>(code % 100)};
  reason = reason.substr(0, kMaxReason);
  value.insert(value.end(), reason.begin(), reason.end());
  add(stun_attribute::kErrorCode, value);
}

std::vector<uint8_t> StunWriter::finish(std::span<const uint8_t> integrity_key, bool fingerprint) && {
  if (!integrity_key.empty()) {
    const auto mac = stun_integrity(out_, integrity_key);
    add(stun_attribute::kMessageIntegrity, mac);
  }
  if (fingerprint) {
    // The length field must already count FINGERPRINT when the CRC is taken (RFC 5389 15.5).
    set_length(out_.size() + kAttributeHeader + 4 - kStunHeaderSize);
    const uint32_t crc = stun_fingerprint(out_);
    add_u32(stun_attribute::kFingerprint, crc);
  }
  return std::move(out_);
}

std::vector<uint8_t> build_binding_success(const StunMessage& request, const Endpoint& peer,
                                           std::string_view local_pwd) {
  StunWriter w(kStunBinding, StunClass::SuccessResponse, request.transaction_id);
  w.add_xor_address(stun_attribute::kXorMappedAddress, peer);
  return std::move(w).finish(local_pwd);
}

std::vector<uint8_t> build_binding_error(const StunMessage& request, uint16_t code, std::string_view reason,
                                         std::string_view local_pwd) {
  StunWriter w(kStunBinding, StunClass::ErrorResponse, request.transaction_id);
  w.add_error_code(code, reason);
  if (code == 420 && request.unknown_required_count > 0) {
    const size_t n = std::min(request.unknown_required_count, kMaxUnknownAttributes);
    std::vector<uint8_t> types;
    ByteWriter tw(types);
    for (size_t i = 0; i < n; ++i) tw.u16be(request.unknown_required[i]);
    w.add(stun_attribute::kUnknownAttributes, types);
  }
  return std::move(w).finish(local_pwd);
}

}  // namespace sluice::protocol::webrtc
