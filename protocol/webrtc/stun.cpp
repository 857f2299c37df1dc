#include "protocol/webrtc/stun.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <string>

#include "base/byte_io.hpp"

namespace sluice::protocol::webrtc {
namespace {

// FINGERPRINT is the CRC-32 xor this (the ASCII of "STUN"), so that a CRC-32 some other protocol
// put in the same place does not pass for STUN's (docs/webrtc-protocol.md, "FINGERPRINT").
constexpr uint32_t kFingerprintXor = 0x5354554e;
constexpr size_t kAttributeHeader = 4;

// The reflected CRC-32 (polynomial 0xEDB88320, initial and final value 0xFFFFFFFF).
constexpr std::array<uint32_t, 256> make_crc32_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<uint32_t, 256> kCrc32Table = make_crc32_table();

std::string hex16(uint16_t v) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) out += kDigits[(v >> shift) & 0xF];
  return out;
}

Error malformed(std::string what) { return Error(Errc::Malformed, "stun: " + std::move(what)); }

// XOR-MAPPED-ADDRESS (RFC 5389 15.2): family, port xor the cookie's top half, address xor the
// cookie (IPv4) or the cookie and the transaction id (IPv6).
Result<Endpoint> read_xor_address(std::span<const uint8_t> value, const uint8_t* header) {
  if (value.size() < 4) return malformed("XOR-MAPPED-ADDRESS shorter than 4 bytes");
  const uint8_t family = value[1];
  const size_t want = family == 1 ? 8 : family == 2 ? 20 : 0;
  if (want == 0) return malformed("XOR-MAPPED-ADDRESS family " + std::to_string(family) + " (1 or 2)");
  if (value.size() != want) return malformed("XOR-MAPPED-ADDRESS of " + std::to_string(value.size()) + " bytes");
  Endpoint out;
  out.port = static_cast<uint16_t>((value[2] << 8 | value[3]) ^ (kStunMagicCookie >> 16));
  out.address.v6 = family == 2;
  // header + 4 is the cookie followed by the transaction id: the 16-byte mask of IPv6.
  for (size_t i = 0; i + 4 < want; ++i) out.address.bytes[i] = value[4 + i] ^ header[4 + i];
  return out;
}

struct AttributeSink {
  StunMessage& m;
  const uint8_t* header;
};

// One attribute of a known type into the message; unknown ones are counted when comprehension is
// required (below 0x8000) and skipped otherwise. Duplicates: the first one counts (RFC 5389 15).
Result<void> read_attribute(AttributeSink sink, uint16_t type, std::span<const uint8_t> value) {
  StunMessage& m = sink.m;
  auto need = [&](size_t size, const char* name) -> Result<void> {
    if (value.size() == size) return {};
    return malformed(std::string(name) + " of " + std::to_string(value.size()) + " bytes (" + std::to_string(size) +
                     " expected)");
  };
  namespace a = stun_attribute;
  switch (type) {
    case a::kUsername:
      if (value.size() > kMaxStunUsername) return malformed("USERNAME over 512 bytes");
      if (!m.username) m.username = std::string_view(reinterpret_cast<const char*>(value.data()), value.size());
      return {};
    case a::kPriority: {
      auto ok = need(4, "PRIORITY");
      if (ok && !m.priority) m.priority = load_u32be(value.data());
      return ok;
    }
    case a::kUseCandidate: {
      auto ok = need(0, "USE-CANDIDATE");
      m.use_candidate = true;
      return ok;
    }
    case a::kIceControlling:
    case a::kIceControlled: {
      auto ok = need(8, type == a::kIceControlling ? "ICE-CONTROLLING" : "ICE-CONTROLLED");
      if (!ok) return ok;
      auto& field = type == a::kIceControlling ? m.ice_controlling : m.ice_controlled;
      if (!field) field = uint64_t{load_u32be(value.data())} << 32 | load_u32be(value.data() + 4);
      return {};
    }
    case a::kXorMappedAddress: {
      auto address = read_xor_address(value, sink.header);
      if (!address) return std::move(address).error();
      if (!m.xor_mapped_address) m.xor_mapped_address = *address;
      return {};
    }
    case a::kErrorCode: {
      if (value.size() < 4) return malformed("ERROR-CODE shorter than 4 bytes");
      const unsigned cls = value[2] & 7, number = value[3];
      if (cls < 3 || cls > 6 || number > 99) return malformed("ERROR-CODE class or number out of range");
      if (!m.error_code) {
        m.error_code = static_cast<uint16_t>(cls * 100 + number);
        m.error_reason = std::string_view(reinterpret_cast<const char*>(value.data() + 4), value.size() - 4);
      }
      return {};
    }
    default:
      if (type < 0x8000) {
        if (m.unknown_required_count < kMaxUnknownAttributes) m.unknown_required[m.unknown_required_count] = type;
        ++m.unknown_required_count;
      }
      return {};
  }
}

}  // namespace

uint16_t stun_message_type(uint16_t method, StunClass kind) {
  const unsigned c = static_cast<unsigned>(kind);
  return static_cast<uint16_t>((method & 0x000F) | (method & 0x0070) << 1 | (method & 0x0F80) << 2 | (c & 1) << 4 |
                               (c & 2) << 7);
}

bool looks_like_stun(std::span<const uint8_t> datagram) {
  return datagram.size() >= kStunHeaderSize && datagram[0] < 4 && load_u32be(datagram.data() + 4) == kStunMagicCookie;
}

uint32_t stun_fingerprint(std::span<const uint8_t> before) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : before) crc = (crc >> 8) ^ kCrc32Table[(crc ^ b) & 0xFF];
  return (crc ^ 0xFFFFFFFFu) ^ kFingerprintXor;
}

std::array<uint8_t, kStunIntegritySize> stun_integrity(std::span<const uint8_t> before, std::span<const uint8_t> key) {
  std::array<uint8_t, kStunIntegritySize> out{};
  if (before.size() < kStunHeaderSize || before.size() + kAttributeHeader + kStunIntegritySize > kMaxStunMessage) {
    return out;  // callers only pass parsed or built messages, which are in range
  }
  // The length field as if MESSAGE-INTEGRITY were the last attribute: FINGERPRINT, added after
  // it, is not covered (docs/webrtc-protocol.md, "MESSAGE-INTEGRITY").
  std::array<uint8_t, kMaxStunMessage> copy;
  std::memcpy(copy.data(), before.data(), before.size());
  const size_t length = before.size() - kStunHeaderSize + kAttributeHeader + kStunIntegritySize;
  copy[2] = static_cast<uint8_t>(length >> 8);
  copy[3] = static_cast<uint8_t>(length);
  unsigned int out_len = 0;
  // HMAC() fails only when out of memory; the zero result then never verifies.
  HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), copy.data(), before.size(), out.data(), &out_len);
  return out;
}

bool stun_integrity_ok(const StunMessage& message, std::span<const uint8_t> key) {
  if (!message.integrity_offset) return false;
  const size_t at = *message.integrity_offset;
  if (at + kAttributeHeader + kStunIntegritySize > message.datagram.size()) return false;
  const auto expected = stun_integrity(message.datagram.first(at), key);
  return CRYPTO_memcmp(expected.data(), message.datagram.data() + at + kAttributeHeader, kStunIntegritySize) == 0;
}

Result<StunMessage> parse_stun(std::span<const uint8_t> datagram) {
  if (datagram.size() < kStunHeaderSize) {
    return Error(Errc::Truncated, "stun: " + std::to_string(datagram.size()) + " bytes, less than the 20-byte header");
  }
  if (datagram.size() > kMaxStunMessage) {
    return Error(Errc::LimitExceeded,
                 "stun: a message of " + std::to_string(datagram.size()) + " bytes (at most 1500)");
  }
  const uint8_t* h = datagram.data();
  if (h[0] & 0xC0) return malformed("the first two bits are not zero");
  // Methods above 0x3FF would make the first byte collide with ZRTP's and DTLS's on the shared
  // port, so RFC 7983 reserves 0..3 for STUN and nothing else can be a check.
  if (h[0] > 3) return malformed("first byte " + std::to_string(h[0]) + " is outside STUN's 0..3 (RFC 7983)");
  if (load_u32be(h + 4) != kStunMagicCookie) return Error(Errc::Unsupported, "stun: no magic cookie (RFC 3489 STUN)");
  const size_t length = static_cast<size_t>(h[2] << 8 | h[3]);
  if (length % 4 != 0) return malformed("length " + std::to_string(length) + " is not a multiple of 4");
  if (kStunHeaderSize + length != datagram.size()) {
    return malformed("length " + std::to_string(length) + " but " + std::to_string(datagram.size() - kStunHeaderSize) +
                     " bytes follow the header");
  }
  StunMessage m;
  const uint16_t type = static_cast<uint16_t>(h[0] << 8 | h[1]);
  m.method = static_cast<uint16_t>((type & 0x000F) | (type & 0x00E0) >> 1 | (type & 0x3E00) >> 2);
  m.kind = static_cast<StunClass>((type >> 4 & 1) | (type >> 7 & 2));
  std::memcpy(m.transaction_id.data(), h + 8, m.transaction_id.size());
  m.datagram = datagram;

  size_t pos = kStunHeaderSize;
  while (pos < datagram.size()) {
    if (m.has_fingerprint) return malformed("an attribute after FINGERPRINT");
    if (datagram.size() - pos < kAttributeHeader)
      return malformed("an attribute header cut at byte " + std::to_string(pos));
    const uint16_t attr = static_cast<uint16_t>(h[pos] << 8 | h[pos + 1]);
    const size_t size = static_cast<size_t>(h[pos + 2] << 8 | h[pos + 3]);
    const size_t padded = (size + 3) & ~size_t{3};
    if (padded > datagram.size() - pos - kAttributeHeader) {
      return malformed("attribute " + hex16(attr) + " at byte " + std::to_string(pos) + ": length " +
                       std::to_string(size) + " runs past the end");
    }
    const auto value = datagram.subspan(pos + kAttributeHeader, size);
    if (attr == stun_attribute::kFingerprint) {
      if (size != 4) return malformed("FINGERPRINT of " + std::to_string(size) + " bytes");
      if (load_u32be(value.data()) != stun_fingerprint(datagram.first(pos))) {
        return malformed("FINGERPRINT does not match");
      }
      m.has_fingerprint = true;
    } else if (m.integrity_offset) {
      // Not covered by MESSAGE-INTEGRITY: ignored (RFC 5389 15.4).
    } else if (attr == stun_attribute::kMessageIntegrity) {
      if (size != kStunIntegritySize) return malformed("MESSAGE-INTEGRITY of " + std::to_string(size) + " bytes");
      m.integrity_offset = pos;
    } else {
      auto ok = read_attribute(AttributeSink{m, h}, attr, value);
      if (!ok) return std::move(ok).error();
    }
    pos += kAttributeHeader + padded;
  }
  return m;
}

}  // namespace sluice::protocol::webrtc
