#include "server/access/signature.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <charconv>

#include "server/access/query.hpp"
#include "server/access/token.hpp"

namespace sluice::server {

std::string url_signature(std::string_view secret, std::string_view action, std::string_view app,
                          std::string_view stream, int64_t expires) {
  std::string message;
  message.reserve(action.size() + app.size() + stream.size() + 24);
  message.append(action).append("\n").append(app).append("\n").append(stream).append("\n");
  message.append(std::to_string(expires));
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[mac[i] >> 4]);
    hex.push_back(kHex[mac[i] & 15]);
  }
  return hex;
}

std::string_view signature_check_text(SignatureCheck c) {
  switch (c) {
    case SignatureCheck::Valid: return "valid signature";
    case SignatureCheck::Missing: return "no signature";
    case SignatureCheck::Malformed: return "malformed expires or sign";
    case SignatureCheck::Expired: return "signed URL expired";
    case SignatureCheck::Wrong: return "wrong signature";
  }
  return "?";
}

SignatureCheck check_url_signature(std::string_view secret, std::string_view action, std::string_view app,
                                   std::string_view stream, std::string_view query, int64_t now_s, int64_t skew_s) {
  auto sign = query_param(query, "sign");
  auto expires_text = query_param(query, "expires");
  if (!sign && !expires_text) return SignatureCheck::Missing;
  if (!sign || !expires_text || sign->size() != 64 || expires_text->empty() || expires_text->size() > 18) {
    return SignatureCheck::Malformed;
  }
  int64_t expires = 0;
  auto [end, ec] = std::from_chars(expires_text->data(), expires_text->data() + expires_text->size(), expires);
  if (ec != std::errc() || end != expires_text->data() + expires_text->size() || expires < 0) {
    return SignatureCheck::Malformed;
  }
  std::string presented = *sign;
  for (char& c : presented) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  // The signature first, so that an expired URL is only reported as such when it is genuine.
  if (!token_equal(presented, url_signature(secret, action, app, stream, expires))) return SignatureCheck::Wrong;
  if (now_s > expires + skew_s) return SignatureCheck::Expired;
  return SignatureCheck::Valid;
}

}  // namespace sluice::server
