#include "server/access/hook_client.hpp"

#include <algorithm>
#include <exception>
#include <string_view>
#include <utility>
#include <vector>

#include "server/io/logging.hpp"
#include "server/io/uv_handle.hpp"

namespace sluice::server {

namespace {

// Where curl writes the reply; refusing bytes past the bound makes it abort the transfer.
struct ReplySink {
  std::string bytes;
  bool too_large = false;
};

}  // namespace

// One attempt while curl has it. Owns the easy handle and what it points into (body, headers,
// error buffer), so all of it goes together once curl lets go of the handle.
struct HookClient::Transfer {
  uint64_t id = 0;
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  std::string request_body;  // CURLOPT_POSTFIELDS points here: curl does not copy it
  ReplySink response;
  std::chrono::steady_clock::time_point started;
  std::chrono::steady_clock::time_point deadline;  // the sweep's backstop (see expire_overdue)
  HookCallback done;
  char error[CURL_ERROR_SIZE] = {};

  Transfer() = default;
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  // The owner has removed easy from the multi handle first.
  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
  }
};

// One post_reliably job: the attempt in flight, or the timer until the next one.
struct HookClient::Retry {
  HookClient* client = nullptr;
  uint64_t id = 0;
  HookRequest request;
  uint32_t attempts = 1;
  uint32_t attempt = 0;  // attempts started so far
  std::chrono::milliseconds delay{0};
  std::function<void(bool, const HookReply&)> done;
  uint64_t transfer = 0;        // the attempt's post() id; 0 while the timer waits
  uv_timer_t* timer = nullptr;  // freed by its close callback, which may come after the job

  Retry() = default;
  Retry(const Retry&) = delete;
  Retry& operator=(const Retry&) = delete;
  ~Retry() {
    if (timer != nullptr) close_and_delete(timer);
  }
};

namespace {

bool has_http_scheme(std::string_view url) {
  auto starts = [&](std::string_view scheme) {
    return url.size() > scheme.size() && std::equal(scheme.begin(), scheme.end(), url.begin(), [](char a, char b) {
             return a == (b >= 'A' && b <= 'Z' ? static_cast<char>(b - 'A' + 'a') : b);
           });
  };
  return starts("http://") || starts("https://");
}

// Runs user code from a loop callback: whatever it throws stops here, with a log line.
template <typename F>
void call_user(const char* what, F&& f) noexcept {
  try {
    f();
  } catch (const std::exception& e) {
    SLUICE_LOG_WARN("event=hook_callback_threw callback={} error=\"{}\"", what, printable(e.what()));
  } catch (...) {
    SLUICE_LOG_WARN("event=hook_callback_threw callback={}", what);
  }
}

size_t on_body(char* data, size_t size, size_t count, void* user) noexcept {
  auto& sink = *static_cast<ReplySink*>(user);
  const size_t n = size * count;
  // Returning less than n makes curl abort the transfer (CURLE_WRITE_ERROR).
  if (sink.bytes.size() + n > HookClient::kMaxReplyBytes) {
    sink.too_large = true;
    return 0;
  }
  try {
    sink.bytes.append(data, n);
  } catch (...) {
    return 0;
  }
  return n;
}

uint64_t ms_since(std::chrono::steady_clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t).count());
}

}  // namespace

HookClient::HookClient(uv_loop_t* loop)
    : loop_(loop), curl_(loop, kMaxConnections, [this](CURL* easy, CURLcode result) { on_finished(easy, result); }) {}

HookClient::~HookClient() { close(); }

uint64_t HookClient::post(HookRequest request, HookCallback done) {
  const uint64_t id = next_id_++;
  auto fail = [&](std::string error) {
    HookReply reply;
    reply.error = std::move(error);
    make_ready(id, std::move(reply), std::move(done));
    return id;
  };
  if (closed_) return fail("closed");
  if (!has_http_scheme(request.url)) return fail("unsupported URL (http:// or https:// only)");
  if (!curl_.usable()) return fail("curl unavailable");

  auto t = std::make_unique<Transfer>();
  t->id = id;
  t->easy = curl_easy_init();
  if (t->easy == nullptr) return fail("curl_easy_init failed");
  t->request_body = std::move(request.body);
  t->started = std::chrono::steady_clock::now();
  t->deadline = t->started + std::max(request.timeout, std::chrono::milliseconds{1}) + kDeadlineSlack;
  for (const char* header : {"Content-Type: application/json", "Expect:"}) {
    curl_slist* grown = curl_slist_append(t->headers, header);
    if (grown == nullptr) return fail("out of memory");
    t->headers = grown;
  }
  // 0 would mean "no timeout" to curl: a hook must always end.
  const long timeout_ms = std::max<long>(1, static_cast<long>(request.timeout.count()));

  CURL* e = t->easy;
  CURLcode rc = CURLE_OK;
  auto set = [&](CURLoption option, auto value) {
    if (rc == CURLE_OK) rc = curl_easy_setopt(e, option, value);
  };
  set(CURLOPT_PRIVATE, static_cast<void*>(t.get()));
  set(CURLOPT_ERRORBUFFER, t->error);
  set(CURLOPT_URL, request.url.c_str());
  set(CURLOPT_NOSIGNAL, 1L);  // the loop's process must not get SIGALRM from curl's resolver
  set(CURLOPT_PROTOCOLS_STR, "http,https");
  set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  set(CURLOPT_FOLLOWLOCATION, 0L);  // a hook's answer is the answer; a redirect is just a 3xx
  set(CURLOPT_USERAGENT, "sluice/" SLUICE_VERSION);
  set(CURLOPT_HTTPHEADER, t->headers);
  set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->request_body.size()));
  set(CURLOPT_POSTFIELDS, t->request_body.data());
  set(CURLOPT_TIMEOUT_MS, timeout_ms);
  // A declared length over the bound fails before any byte is read; chunked replies hit on_body.
  set(CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxReplyBytes));
  set(CURLOPT_WRITEFUNCTION, &on_body);
  set(CURLOPT_WRITEDATA, static_cast<void*>(&t->response));
  if (rc != CURLE_OK) return fail(curl_easy_strerror(rc));

  t->done = std::move(done);
  transfers_.emplace(id, std::move(t));
  start_sweep();
  if (CURLMcode mc = curl_.add(e); mc != CURLM_OK) {
    done = std::move(transfers_[id]->done);
    transfers_.erase(id);
    return fail(curl_multi_strerror(mc));
  }
  return id;
}

void HookClient::cancel(uint64_t id) {
  if (auto it = transfers_.find(id); it != transfers_.end()) {
    curl_.remove(it->second->easy);
    transfers_.erase(it);
    return;
  }
  auto ready = std::find_if(ready_.begin(), ready_.end(), [id](const Ready& r) { return r.id == id; });
  if (ready != ready_.end()) ready_.erase(ready);
}

size_t HookClient::in_flight() const {
  size_t waiting = 0;
  for (const auto& [id, retry] : retries_) waiting += retry->transfer == 0;
  return transfers_.size() + ready_.size() + waiting;
}

void HookClient::close() {
  closed_ = true;
  for (auto& [id, t] : transfers_) curl_.remove(t->easy);
  transfers_.clear();
  ready_.clear();
  retries_.clear();
  curl_.close();
  if (sweep_ != nullptr) {
    close_and_delete(sweep_);
    sweep_ = nullptr;
  }
  if (deliver_ != nullptr) {
    close_and_delete(deliver_);
    deliver_ = nullptr;
  }
}

// Called while the bridge reads curl's messages: records the outcome and frees the transfer, but
// leaves the user's callback for deliver_ready(), outside curl's call stack.
void HookClient::on_finished(CURL* easy, CURLcode result) {
  char* priv = nullptr;
  curl_easy_getinfo(easy, CURLINFO_PRIVATE, &priv);
  auto* t = reinterpret_cast<Transfer*>(priv);
  auto it = t != nullptr ? transfers_.find(t->id) : transfers_.end();
  if (it == transfers_.end() || it->second.get() != t) {
    curl_.remove(easy);  // not one of ours any more; should not happen
    return;
  }
  HookReply reply;
  curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.elapsed_ms = ms_since(t->started);
  if (result == CURLE_OK) {
    reply.completed = true;
    reply.body = std::move(t->response.bytes);
  } else if (result == CURLE_FILESIZE_EXCEEDED || t->response.too_large) {
    reply.error = "response too large";
  } else if (result == CURLE_OPERATION_TIMEDOUT) {
    reply.error = "timeout";
  } else {
    reply.error = t->error[0] != '\0' ? t->error : curl_easy_strerror(result);
  }
  curl_.remove(easy);
  const uint64_t id = t->id;
  HookCallback done = std::move(t->done);
  transfers_.erase(it);
  make_ready(id, std::move(reply), std::move(done));
}

void HookClient::start_sweep() {
  if (sweep_ == nullptr) {
    sweep_ = new uv_timer_t{};
    uv_timer_init(loop_, sweep_);
    sweep_->data = this;
  }
  if (uv_is_active(reinterpret_cast<uv_handle_t*>(sweep_))) return;
  const auto period = static_cast<uint64_t>(kSweepPeriod.count());
  uv_timer_start(
      sweep_, [](uv_timer_t* t) { static_cast<HookClient*>(t->data)->expire_overdue(); }, period, period);
}

// curl times a transfer from when it gets a connection: one queued behind kMaxConnections others
// would wait longer than its timeout. A decision must not, so anything past its deadline ends here.
void HookClient::expire_overdue() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<uint64_t> overdue;
  for (const auto& [id, t] : transfers_)
    if (now >= t->deadline) overdue.push_back(id);
  for (uint64_t id : overdue) {
    auto it = transfers_.find(id);
    Transfer& t = *it->second;
    curl_.remove(t.easy);
    HookReply reply;
    reply.error = "timeout";
    reply.elapsed_ms = ms_since(t.started);
    HookCallback done = std::move(t.done);
    transfers_.erase(it);
    make_ready(id, std::move(reply), std::move(done));
  }
  if (transfers_.empty()) uv_timer_stop(sweep_);
}

void HookClient::make_ready(uint64_t id, HookReply&& reply, HookCallback&& done) {
  ready_.push_back(Ready{id, std::move(reply), std::move(done)});
  if (deliver_ == nullptr) {
    // Normally made once; after close() a post() makes a one-shot one for its "closed" reply.
    deliver_ = new uv_idle_t{};
    uv_idle_init(loop_, deliver_);
    deliver_->data = this;
  }
  // An active idle handle keeps the loop from blocking in poll until the replies are out.
  uv_idle_start(deliver_, [](uv_idle_t* idle) { static_cast<HookClient*>(idle->data)->deliver_ready(); });
}

void HookClient::deliver_ready() {
  uv_idle_t* self = deliver_;
  // Only what is ready now: a callback that posts (say, a bad URL) is answered next iteration,
  // so it cannot keep the loop in here.
  for (size_t n = ready_.size(); n > 0 && !ready_.empty(); --n) {
    Ready r = std::move(ready_.front());
    ready_.pop_front();
    call_user("post", [&] {
      if (r.done) r.done(std::move(r.reply));
    });
    if (deliver_ != self) return;  // the callback closed the client
  }
  if (!ready_.empty()) return;
  if (closed_) {
    close_and_delete(deliver_);
    deliver_ = nullptr;
  } else {
    uv_idle_stop(deliver_);
  }
}

void HookClient::post_reliably(HookRequest request, uint32_t attempts, std::chrono::milliseconds retry_delay,
                               std::function<void(bool delivered, const HookReply& last)> done) {
  if (closed_) {
    post(std::move(request), [done = std::move(done)](HookReply&& reply) {
      if (done) done(false, reply);
    });
    return;
  }
  auto retry = std::make_unique<Retry>();
  retry->client = this;
  retry->id = next_id_++;
  retry->request = std::move(request);
  retry->attempts = std::max<uint32_t>(1, attempts);
  retry->delay = std::clamp(retry_delay, std::chrono::milliseconds{0}, kMaxRetryDelay);
  retry->done = std::move(done);
  retry->timer = new uv_timer_t{};
  uv_timer_init(loop_, retry->timer);
  retry->timer->data = retry.get();
  Retry& job = *retry;
  retries_.emplace(job.id, std::move(retry));
  start_attempt(job);
}

void HookClient::start_attempt(Retry& retry) {
  ++retry.attempt;
  retry.transfer =
      post(retry.request, [this, id = retry.id](HookReply&& reply) { on_attempt_done(id, std::move(reply)); });
}

void HookClient::on_attempt_done(uint64_t retry_id, HookReply&& reply) {
  auto it = retries_.find(retry_id);
  if (it == retries_.end()) return;
  Retry& retry = *it->second;
  retry.transfer = 0;
  const bool delivered = reply.ok();
  if (!delivered) {
    SLUICE_LOG_WARN(
        "event=hook_attempt_failed url=\"{}\" attempt={}/{} {}", printable(retry.request.url), retry.attempt,
        retry.attempts,
        reply.completed ? "status=" + std::to_string(reply.status) : "error=\"" + printable(reply.error) + "\"");
  }
  if (delivered || retry.attempt >= retry.attempts) {
    auto done = std::move(retry.done);
    retries_.erase(it);  // before done(), which may post or close
    if (done) call_user("post_reliably", [&] { done(delivered, reply); });
    return;
  }
  uv_timer_start(
      retry.timer,
      [](uv_timer_t* timer) {
        Retry& r = *static_cast<Retry*>(timer->data);
        call_user("retry", [&] { r.client->start_attempt(r); });
      },
      static_cast<uint64_t>(retry.delay.count()), 0);
  retry.delay = std::min(retry.delay * 2, kMaxRetryDelay);
}

}  // namespace sluice::server
