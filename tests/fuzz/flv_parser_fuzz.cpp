// FlvParser on arbitrary bytes, fed whole and then split at a point chosen by the input: both
// feeds must agree (push-fed parsing may not depend on where the input is cut).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "media/flv/flv.hpp"
#include "media/flv/flv_parser.hpp"

using namespace sluice;
using namespace sluice::media;

namespace {

struct Outcome {
  bool ok = true;
  std::vector<FlvTag> tags;
};

Outcome run(std::span<const uint8_t> in, size_t split) {
  FlvParser p(FlvParser::Limits{1 << 16});
  Outcome out;
  for (auto part : {in.first(split), in.subspan(split)}) {
    auto r = p.feed(part);
    if (!r) {
      out.ok = false;
      return out;
    }
    for (auto& t : *r) out.tags.push_back(std::move(t));
  }
  return out;
}

bool same(const FlvTag& a, const FlvTag& b) {
  return a.type == b.type && a.timestamp == b.timestamp && a.body.size() == b.body.size() &&
         std::equal(a.body.span().begin(), a.body.span().end(), b.body.span().begin());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> in(data, size);
  const Outcome whole = run(in, size);
  const Outcome split = run(in, size ? data[0] % size : 0);
  if (whole.ok != split.ok) std::abort();
  if (!whole.ok) return 0;
  if (whole.tags.size() != split.tags.size()) std::abort();
  for (size_t i = 0; i < whole.tags.size(); ++i) {
    if (!same(whole.tags[i], split.tags[i])) std::abort();
    // Re-encoding a parsed tag and parsing the header back gives the same fields.
    uint8_t header[kFlvTagHeaderSize];
    const FlvTag& t = whole.tags[i];
    write_tag_header(t.type, static_cast<uint32_t>(t.body.size()), t.timestamp, header);
    auto back = parse_tag_header(header);
    if (!back || back->type != t.type || back->timestamp != t.timestamp || back->data_size != t.body.size())
      std::abort();
  }
  return 0;
}
