// srt: { listen, latency, passphrase(_file|_env), pbkeylen, max_bandwidth, payload_size,
// peer_idle_timeout } and apps.NAME.srt: { latency, passphrase(_file|_env) } (config/srt.hpp,
// docs/srt.md). Internal to config/.
#pragma once

#include "config/srt.hpp"
#include "config/yaml_fields.hpp"

namespace sluice::config {

void load_srt(FieldReader& r, const Field& self, SrtConfig& srt);
void load_app_srt(FieldReader& r, const Field& self, SrtAppConfig& srt);

}  // namespace sluice::config
