#include "server/access/policy.hpp"

#include "server/access/query.hpp"
#include "server/access/signature.hpp"
#include "server/access/token.hpp"

namespace sluice::server {

std::string_view access_action_name(AccessAction a) { return a == AccessAction::Publish ? "publish" : "play"; }

namespace {

bool listed(std::span<const config::Cidr> list, std::span<const uint8_t> peer) {
  for (const auto& c : list)
    if (c.contains(peer)) return true;
  return false;
}

// Every configured key is compared, so the time taken does not say which one came close.
bool key_matches(const config::AccessRules& rules, std::string_view stream, std::string_view presented) {
  bool match = false;
  for (const std::string& k : rules.keys) match |= token_equal(presented, k);
  for (const auto& [name, k] : rules.stream_keys) {
    if (name == stream) match |= token_equal(presented, k);
  }
  return match;
}

}  // namespace

AccessVerdict check_access(const config::AccessRules& rules, AccessAction action, std::string_view app,
                           std::string_view stream, std::string_view query, std::span<const uint8_t> peer,
                           int64_t now_s) {
  if (listed(rules.deny, peer)) return {Denial::Address, "address denied"};
  if (!rules.allow.empty() && !listed(rules.allow, peer)) return {Denial::Address, "address not allowed"};
  if (!rules.needs_credentials()) return {};

  auto key = query_param(query, "key");
  if (!key) key = query_param(query, "token");
  const bool has_keys = !rules.keys.empty() || !rules.stream_keys.empty();
  if (key && has_keys && key_matches(rules, stream, *key)) return {};

  SignatureCheck sig = SignatureCheck::Missing;
  if (rules.signed_url.enabled()) {
    const auto& s = rules.signed_url;
    sig = check_url_signature(s.secret.value, access_action_name(action), app, stream, query, now_s,
                              s.skew.count() / 1000);
    if (sig == SignatureCheck::Valid) return {};
  }
  if (sig != SignatureCheck::Missing) return {Denial::Signature, std::string(signature_check_text(sig))};
  if (key) return {Denial::KeyWrong, has_keys ? "wrong key" : "keys are not used here; a signed URL is required"};
  if (has_keys && rules.signed_url.enabled()) return {Denial::KeyMissing, "a key or a signed URL is required"};
  if (has_keys) return {Denial::KeyMissing, "a key is required (?key=...)"};
  return {Denial::KeyMissing, "a signed URL is required (?expires=...&sign=...)"};
}

}  // namespace sluice::server
