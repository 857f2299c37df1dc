// StreamLocator: where a stream is published in a cluster of nodes (docs/cluster.md, "Location"),
// for the pulls that bring another node's stream to this one. The relay code only asks; the
// cluster wing (server/cluster/cluster_service.hpp) answers from the registry, so relays never
// depend on the store.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace sluice::server {

struct StreamLocation {
  enum class Kind : uint8_t {
    Remote,       // another node owns it: pull from `rtmp`
    Nobody,       // no node owns it (or only an earlier run of this one): wait for its publisher
    Here,         // this node owns it: it is (or is about to be) published on one of its loops
    Unreachable,  // the registry did not answer
  };
  Kind kind = Kind::Nobody;
  std::string owner;  // the owning node's id (Remote, Here)
  std::string rtmp;   // the owner's advertised rtmp://host:port (Remote)
};

// Looks `key` ("app/name") up; `done` runs exactly once, later on the same loop.
using StreamLocator = std::function<void(const std::string& key, std::function<void(StreamLocation)> done)>;

// What a loop's relays need to pull streams from other nodes.
struct ClusterPulls {
  StreamLocator locate;  // worker 0's (pulls run there); empty on the other loops
  std::string token;     // the internal token the owner admits pulls with (may be empty)
};

}  // namespace sluice::server
