#include "server/api/json_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>

namespace sluice::server {

namespace {

// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF) starting at s[i], a byte >= 0x80; 0 when it is not one. The same set of
// sequences nlohmann's decoder accepts.
size_t utf8_sequence(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  unsigned c = at(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}

// Per byte: 0 copied as it is, 1 escaped, 2 the start of a multi-byte UTF-8 sequence (or not UTF-8).
constexpr std::array<uint8_t, 256> kByteClass = [] {
  std::array<uint8_t, 256> t{};
  for (int c = 0; c < 256; ++c) t[c] = c < 0x20 || c == '"' || c == '\\' ? 1 : c >= 0x80 ? 2 : 0;
  return t;
}();

void append_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      const char esc[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out.append(esc, sizeof esc);
    }
  }
}

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  const size_t mark = out.size();
  out += '"';
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    uint8_t cls = kByteClass[c];
    if (cls == 0) {
      ++i;
      continue;
    }
    if (cls == 2) {
      size_t n = utf8_sequence(s, i);
      if (n == 0) {
        // Rare (names come from clients, but clients send UTF-8): nlohmann's own replacement
        // rules decide which bytes become U+FFFD, so its serialiser writes this one.
        out.resize(mark);
        out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
      }
      i += n;
      continue;
    }
    out.append(s.data() + run, i - run);
    append_escape(out, c);
    run = ++i;
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

JsonWriter& JsonWriter::open(char c, bool array) {
  before_value();
  out_ += c;
  stack_.push_back(Frame{array, true});
  return *this;
}

JsonWriter& JsonWriter::close(char c) {
  Frame f = stack_.back();
  stack_.pop_back();
  if (!f.empty) {
    out_ += '\n';
    out_.append(2 * stack_.size(), ' ');
  }
  out_ += c;
  return *this;
}

void JsonWriter::next_item() {
  Frame& f = stack_.back();
  out_ += f.empty ? "\n" : ",\n";
  f.empty = false;
  out_.append(2 * stack_.size(), ' ');
}

JsonWriter& JsonWriter::key(std::string_view k) {
  next_item();
  append_json_string(out_, k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

namespace {
// Decimal digits of a 64-bit integer (20, plus the sign) fit in 24 bytes.
template <class Integer>
void append_integer(std::string& out, Integer v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}
}  // namespace

JsonWriter& JsonWriter::signed_number(int64_t v) {
  before_value();
  append_integer(out_, v);
  return *this;
}

JsonWriter& JsonWriter::unsigned_number(uint64_t v) {
  before_value();
  append_integer(out_, v);
  return *this;
}

JsonWriter& JsonWriter::number(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  // nlohmann's own shortest round-trip form (what dump() calls), so the text is the same.
  char buf[64];
  char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, v);
  out_.append(buf, end);
  return *this;
}

JsonWriter& JsonWriter::value(const nlohmann::json& j) {
  using T = nlohmann::json::value_t;
  switch (j.type()) {
    case T::object:
      begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        key(it.key());
        value(*it);
      }
      return end_object();
    case T::array:
      begin_array();
      for (const auto& e : j) value(e);
      return end_array();
    case T::string: return string(j.get_ref<const std::string&>());
    case T::boolean: return boolean(j.get<bool>());
    case T::number_integer: return signed_number(j.get<int64_t>());
    case T::number_unsigned: return unsigned_number(j.get<uint64_t>());
    case T::number_float: return number(j.get<double>());
    case T::null: return null();
    case T::binary:
    case T::discarded: break;
  }
  // Not in the API's answers; written as dump() would, indentation aside.
  before_value();
  out_ += j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return *this;
}

}  // namespace sluice::server
