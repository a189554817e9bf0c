// `llmchaos serve --cassettes DIR`: a forwarded attempt (the healthy answer's plans) answered from the
// cassette of its request, with the recorded timing scaled by the server's time scale. The recorded answer
// goes through answer_delivery.hpp exactly as a real upstream's does in `llmchaos proxy`, so every fault
// kind applies to it as to the proxy's real traffic. A miss is a 501 naming the key, or (hybrid) the
// attempt is forwarded to the upstream, which records the missing cassette.
#include <fmt/format.h>

#include <boost/asio/awaitable.hpp>
#include <filesystem>
#include <map>
#include <mutex>

#include "answer_delivery.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/proxy/cassette.hpp"
#include "proxy_forwarder.hpp"

namespace net = boost::asio;

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::ClientWire;
using mock::Engine;
using mock::Executed;
using mock::Forwarder;
using mock::ForwardRequest;
using mock::HeaderList;
using mock::Plan;
using mock::WaitEnd;
namespace {

using detail::ms_since;

// A cassette's answer as a Source of answer_delivery.hpp: each frame when its recorded time (scaled) after
// the head has come.
struct CassetteSource {
  ClientWire& client;
  const Cassette& cassette;
  double time_scale;
  detail::DeliveryClock::time_point head_at;

  net::awaitable<bool> until(double at_ms) {
    const double due = at_ms * time_scale - ms_since(head_at);
    co_return due <= 0 || co_await client.wait(due) == WaitEnd::elapsed;
  }

  template <class Take>
  net::awaitable<bool> read(Take take) {
    if (!cassette.streamed) {
      if (!co_await until(cassette.end_ms)) co_return false;
      co_return cassette.body.empty() || co_await take(std::string_view(cassette.body));
    }
    for (const auto& frame : cassette.frames) {
      if (!co_await until(frame.at_ms)) co_return false;
      if (!co_await take(std::string_view(frame.bytes))) co_return false;
    }
    co_return co_await until(cassette.end_ms);
  }
};

class CassetteForwarder final : public ProxyForwarder {
 public:
  CassetteForwarder(CassetteOptions options, std::shared_ptr<Forwarder> on_miss)
      : options_(std::move(options)), on_miss_(std::move(on_miss)) {}

  net::awaitable<Executed> forward(ClientWire& client, const ForwardRequest& req, const Plan& plan,
                                   bool keep_alive, Engine& engine, std::uint64_t seq) override;
  void close_idle() override {
    if (on_miss_) on_miss_->close_idle();
  }

 private:
  // The cassette of `key`: null when there is none; throws SpecError when its file is broken.
  std::shared_ptr<const Cassette> find(const std::string& key, const std::string& file) {
    {
      std::lock_guard lock(mutex_);
      if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    }
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return nullptr;
    auto c = std::make_shared<const Cassette>(parse_cassette(read_file_text(file, "cassette"), file));
    std::lock_guard lock(mutex_);
    cache_.emplace(key, c);
    return c;
  }

  CassetteOptions options_;
  std::shared_ptr<Forwarder> on_miss_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<const Cassette>> cache_;
};

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"  // as in answer_delivery.hpp
net::awaitable<Executed> CassetteForwarder::forward(ClientWire& client, const ForwardRequest& req,
                                                    const Plan& plan, bool keep_alive, Engine& engine,
                                                    std::uint64_t seq) {
  const Dialect dialect = plan.dialect;
  const auto key = cassette_key(dialect, req.method, req.path, req.body);
  const auto file = options_.dir + "/" + cassette_file_name(key);
  const HeaderList key_header{{"x-llmchaos-cassette", key}};
  std::shared_ptr<const Cassette> cassette;
  std::string broken;
  try {
    cassette = find(key, file);
  } catch (const std::exception& e) {
    broken = e.what();
  }
  if (!broken.empty()) {
    engine.count_event("cassette_invalid");
    co_return co_await detail::answer_error(client, 500,
                                            fmt::format("cassette {} is broken: {}", key, broken),
                                            "llmchaos_cassette_invalid", keep_alive, key_header);
  }
  if (!cassette && on_miss_) {
    engine.count_event("cassette_miss_forwarded");
    co_return co_await on_miss_->forward(client, req, plan, keep_alive, engine, seq);
  }
  if (!cassette) {
    engine.count_event("cassette_miss");
    co_return co_await detail::answer_error(client, 501,
                                            fmt::format("no cassette for this request: key {} (looked for "
                                                        "{}); record it with `llmchaos proxy --record {}`, "
                                                        "or serve with --on-miss upstream --upstream URL",
                                                        key, file, options_.dir),
                                            "llmchaos_cassette_miss", keep_alive, key_header);
  }
  engine.count_event("cassette_hit");
  Executed out;
  if (!co_await detail::wait_latency(client, plan, out)) co_return out;
  detail::Exchange x{client, plan, keep_alive};
  if (cassette->head_ms > 0) {
    const auto w = co_await client.wait(cassette->head_ms * options_.time_scale);
    if (w != WaitEnd::elapsed) {
      out.outcome = w == WaitEnd::client_closed ? AttemptOutcome::client_closed : AttemptOutcome::cut;
      co_return out;
    }
  }
  detail::AnswerHead head;
  head.status = cassette->status;
  head.headers = cassette->headers;
  head.sse = cassette->streamed;
  if (!cassette->streamed) head.length = cassette->body.size();
  CassetteSource source{client, *cassette, options_.time_scale, detail::DeliveryClock::now()};
  co_await detail::deliver(x, head, source, dialect);
  engine.note_response(seq, x.response_id);
  co_return x.out;
}
#pragma GCC diagnostic pop

}  // namespace

std::shared_ptr<Forwarder> make_cassette_forwarder(CassetteOptions options,
                                                   std::shared_ptr<Forwarder> on_miss) {
  return std::make_shared<CassetteForwarder>(std::move(options), std::move(on_miss));
}

}  // namespace llmchaos::proxy
