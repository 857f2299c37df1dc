#include "server/http/util.hpp"

#include <array>
#include <ctime>

#include "server/access/query.hpp"

namespace sluice::server {

namespace {

constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                 "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

struct ContentType {
  std::string_view ext;
  std::string_view type;
};
constexpr std::array<ContentType, 11> kContentTypes = {{
    {"flv", "video/x-flv"},
    {"f4v", "video/mp4"},
    {"mp4", "video/mp4"},
    {"m4v", "video/mp4"},
    {"m4a", "audio/mp4"},
    {"mov", "video/quicktime"},
    {"mp3", "audio/mpeg"},
    {"aac", "audio/aac"},
    {"ts", "video/mp2t"},
    {"webm", "video/webm"},
    {"mkv", "video/x-matroska"},
}};

char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower_char(a[i]) != lower_char(b[i])) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Digits only; saturates at UINT64_MAX instead of overflowing (a huge first-byte-pos is then
// simply unsatisfiable). False when empty or not all digits.
bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
  }
  out = v;
  return true;
}

int month_index(std::string_view m) {
  for (size_t i = 0; i < kMonths.size(); ++i)
    if (m == kMonths[i]) return static_cast<int>(i);
  return -1;
}

// Seconds since the epoch of a UTC calendar date (no time zone or locale involved).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

struct DateParts {
  int year = -1, month = -1, day = -1, hour = -1, minute = -1, second = -1;
};

std::optional<DateParts> parse_date_parts(std::string_view s) {
  // IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT"
  // RFC 850:     "Sunday, 06-Nov-94 08:49:37 GMT"
  // asctime:     "Sun Nov  6 08:49:37 1994"
  auto num = [](std::string_view v, int& out) {
    uint64_t n = 0;
    if (!parse_u64(v, n) || n > 9999) return false;
    out = static_cast<int>(n);
    return true;
  };
  auto time_of_day = [&](std::string_view t, DateParts& p) {
    return t.size() == 8 && t[2] == ':' && t[5] == ':' && num(t.substr(0, 2), p.hour) &&
           num(t.substr(3, 2), p.minute) && num(t.substr(6, 2), p.second);
  };
  DateParts p;
  size_t comma = s.find(',');
  if (comma != std::string_view::npos) {
    std::string_view rest = trim(s.substr(comma + 1));
    if (rest.size() == 24 && rest.substr(20) == " GMT" && rest[2] == ' ' && rest[6] == ' ' && rest[11] == ' ') {
      p.month = month_index(rest.substr(3, 3));
      if (num(rest.substr(0, 2), p.day) && num(rest.substr(7, 4), p.year) && time_of_day(rest.substr(12, 8), p))
        return p;
      return std::nullopt;
    }
    if (rest.size() == 22 && rest.substr(18) == " GMT" && rest[2] == '-' && rest[6] == '-' && rest[9] == ' ') {
      p.month = month_index(rest.substr(3, 3));
      if (num(rest.substr(0, 2), p.day) && num(rest.substr(7, 2), p.year) && time_of_day(rest.substr(10, 8), p)) {
        // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
        p.year += p.year < 70 ? 2000 : 1900;
        return p;
      }
    }
    return std::nullopt;
  }
  if (s.size() == 24 && s[3] == ' ' && s[7] == ' ' && s[10] == ' ' && s[19] == ' ') {
    p.month = month_index(s.substr(4, 3));
    std::string_view day = s.substr(8, 2);
    if (day[0] == ' ') day.remove_prefix(1);
    if (num(day, p.day) && time_of_day(s.substr(11, 8), p) && num(s.substr(20, 4), p.year)) return p;
  }
  return std::nullopt;
}

// One entity tag at the start of `s`: W/"..." or "...". Returns its length, 0 when malformed.
size_t etag_length(std::string_view s) {
  size_t i = 0;
  if (s.starts_with("W/")) i = 2;
  if (i >= s.size() || s[i] != '"') return 0;
  size_t close = s.find('"', i + 1);
  return close == std::string_view::npos ? 0 : close + 1;
}

}  // namespace

std::string_view http_status_text(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 422: return "Unprocessable Content";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 501: return "Not Implemented";
    case 507: return "Insufficient Storage";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

bool http_percent_decode(std::string_view in, std::string& out) { return percent_decode(in, out); }

std::string http_format_date(int64_t unix_seconds) {
  time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[static_cast<size_t>(tm.tm_wday) % 7],
                tm.tm_mday, kMonths[static_cast<size_t>(tm.tm_mon) % 12], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

std::optional<int64_t> http_parse_date(std::string_view text) {
  auto p = parse_date_parts(trim(text));
  if (!p || p->month < 0 || p->day < 1 || p->day > 31 || p->hour > 23 || p->minute > 59 || p->second > 60)
    return std::nullopt;
  int64_t days = days_from_civil(p->year, static_cast<unsigned>(p->month + 1), static_cast<unsigned>(p->day));
  return days * 86400 + p->hour * 3600 + p->minute * 60 + p->second;
}

std::string_view http_content_type_for(std::string_view path) {
  std::string ext = http_extension_of(path);
  for (const auto& ct : kContentTypes)
    if (ext == ct.ext) return ct.type;
  return {};
}

Result<std::string> http_file_relative_path(std::string_view name) {
  if (name.empty() || name.size() > kHttpMaxPathLength) return Error(Errc::NotFound, "empty or overlong path");
  for (char c : name) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7F || c == '\\' || c == '%') return Error(Errc::NotFound, "forbidden character in path");
  }
  if (name.front() == '/') return Error(Errc::NotFound, "absolute path");
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view seg = name.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return Error(Errc::NotFound, "empty, '.' or '..' path segment");
    if (seg.front() == '.') return Error(Errc::NotFound, "hidden file or folder");
    start = end + 1;
  }
  if (http_content_type_for(name).empty()) return Error(Errc::NotFound, "not a media file type we serve");
  return std::string(name);
}

std::string http_make_etag(uint64_t size, int64_t mtime_ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "\"%llx-%llx\"", static_cast<unsigned long long>(size),
                static_cast<unsigned long long>(mtime_ns));
  return buf;
}

bool http_etag_list_matches(std::string_view list, std::string_view etag, bool weak) {
  list = trim(list);
  if (list == "*") return true;
  std::string_view want = etag.starts_with("W/") ? etag.substr(2) : etag;
  while (!list.empty()) {
    list = trim(list);
    while (!list.empty() && list.front() == ',') list = trim(list.substr(1));
    if (list.empty()) break;
    size_t len = etag_length(list);
    if (len == 0) return false;  // malformed: nothing matches
    std::string_view tag = list.substr(0, len);
    bool is_weak = tag.starts_with("W/");
    if (weak) {
      if ((is_weak ? tag.substr(2) : tag) == want) return true;
    } else if (!is_weak && !etag.starts_with("W/") && tag == etag) {
      return true;
    }
    list.remove_prefix(len);
  }
  return false;
}

HttpRangeResult http_parse_range(std::string_view header, uint64_t size, HttpByteRange& out) {
  std::string_view h = trim(header);
  size_t eq = h.find('=');
  if (eq == std::string_view::npos || !iequals(trim(h.substr(0, eq)), "bytes")) return HttpRangeResult::Whole;
  std::string_view spec = trim(h.substr(eq + 1));
  // Several ranges would need multipart/byteranges; RFC 9110 14.2 lets a server ignore Range.
  if (spec.find(',') != std::string_view::npos) return HttpRangeResult::Whole;
  size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return HttpRangeResult::Whole;
  std::string_view a = trim(spec.substr(0, dash));
  std::string_view b = trim(spec.substr(dash + 1));
  if (a.empty()) {
    uint64_t n = 0;
    if (!parse_u64(b, n)) return HttpRangeResult::Whole;
    if (n == 0 || size == 0) return HttpRangeResult::Unsatisfiable;
    out.first = size - std::min(n, size);
    out.last = size - 1;
    return HttpRangeResult::Partial;
  }
  uint64_t first = 0;
  if (!parse_u64(a, first)) return HttpRangeResult::Whole;
  uint64_t last = UINT64_MAX;
  if (!b.empty()) {
    if (!parse_u64(b, last)) return HttpRangeResult::Whole;
    if (last < first) return HttpRangeResult::Whole;  // an invalid range-spec: the header is ignored
  }
  if (first >= size) return HttpRangeResult::Unsatisfiable;
  out.first = first;
  out.last = std::min(last, size - 1);
  return HttpRangeResult::Partial;
}

HttpPrecondition http_evaluate_preconditions(const HttpRequest& req, const HttpValidators& v) {
  bool get_or_head = req.method == "GET" || req.method == "HEAD";
  if (const std::string* im = req.header("if-match")) {
    if (!http_etag_list_matches(*im, v.etag, false)) return HttpPrecondition::Failed;
  } else if (const std::string* ius = req.header("if-unmodified-since")) {
    auto t = http_parse_date(*ius);
    if (t && v.mtime_s > *t) return HttpPrecondition::Failed;
  }
  if (const std::string* inm = req.header("if-none-match")) {
    if (http_etag_list_matches(*inm, v.etag, true))
      return get_or_head ? HttpPrecondition::NotModified : HttpPrecondition::Failed;
  } else if (const std::string* ims = req.header("if-modified-since"); ims && get_or_head) {
    auto t = http_parse_date(*ims);
    if (t && v.mtime_s <= *t) return HttpPrecondition::NotModified;
  }
  return HttpPrecondition::Proceed;
}

bool http_if_range_allows(const HttpRequest& req, const HttpValidators& v) {
  const std::string* ir = req.header("if-range");
  if (!ir) return true;
  std::string_view value = trim(*ir);
  if (value.starts_with("\"") || value.starts_with("W/")) {
    // Strong comparison: a weak tag never matches.
    return !value.starts_with("W/") && value == v.etag;
  }
  auto t = http_parse_date(value);
  return t && *t == v.mtime_s;
}

std::string http_extension_of(std::string_view path) {
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) return {};
  std::string ext(path.substr(dot + 1));
  for (char& c : ext) c = lower_char(c);
  return ext;
}

}  // namespace sluice::server
