// WriteBatch: arena bytes and shared slices gathered in order; what a partial write leaves.
#include <doctest/doctest.h>

#include <string>

#include "server/io/write_batch.hpp"

using sluice::Slice;
using sluice::server::WriteBatch;

namespace {

std::string joined(std::span<const uv_buf_t> bufs) {
  std::string out;
  for (const uv_buf_t& b : bufs) out.append(b.base, b.len);
  return out;
}

void fill(WriteBatch& batch) {
  std::string head = "head|";
  batch.add_bytes({reinterpret_cast<const uint8_t*>(head.data()), head.size()});
  batch.add_slice(Slice::copy_of(std::string_view("shared body one|")));
  std::string mid = "hdr|";
  batch.add_bytes({reinterpret_cast<const uint8_t*>(mid.data()), mid.size()});
  batch.add_slice(Slice::copy_of(std::string_view("body two")));
}

}  // namespace

TEST_CASE("the finalized pieces are the bytes in the order they were added") {
  WriteBatch batch;
  fill(batch);
  const std::string expected = "head|shared body one|hdr|body two";
  CHECK(batch.bytes() == expected.size());
  CHECK(joined(batch.finalize()) == expected);
}

TEST_CASE("unwritten() is what is left after any number of written bytes") {
  const std::string expected = "head|shared body one|hdr|body two";
  for (size_t written = 0; written <= expected.size(); ++written) {
    WriteBatch batch;
    fill(batch);
    batch.finalize();
    auto rest = batch.unwritten(written);
    INFO("written = " << written);
    CHECK(joined(rest) == expected.substr(written));
    for (const uv_buf_t& b : rest) CHECK(b.len > 0);
  }
}
