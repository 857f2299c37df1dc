// The relay URL type of config/relay_url.hpp, for the relay code (one parser for the config check,
// the API and the connections).
#pragma once

#include "config/relay_url.hpp"

namespace sluice::server {
using config::RelayUrl;
}  // namespace sluice::server
