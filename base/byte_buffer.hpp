// ByteBuffer: a byte vector whose growth leaves the new bytes as they are instead of zeroing
// them, for buffers that are written right after they grow: TLS records are sealed in place
// into the socket's output (server/io/tls_record_sealer.hpp), and zeroing that space first cost
// a tenth of an RTMPS fan-out's CPU.
#pragma once

#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace sluice {

template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}

  // Value-initialisation (what resize() asks for) becomes default-initialisation: nothing, for bytes.
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

using ByteBuffer = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

}  // namespace sluice
