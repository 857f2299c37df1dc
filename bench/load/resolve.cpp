#include "bench/load/resolve.hpp"

#include <cstring>

namespace sluice::bench {

Result<void> resolve_host(const std::string& host, uint16_t port, int socktype, sockaddr_storage& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = socktype;
  addrinfo* found = nullptr;
  const std::string port_str = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), port_str.c_str(), &hints, &found); rc != 0 || !found)
    return Error(Errc::Io, "cannot resolve " + host + ": " + gai_strerror(rc));
  std::memcpy(&out, found->ai_addr, found->ai_addrlen);
  freeaddrinfo(found);
  return {};
}

}  // namespace sluice::bench
