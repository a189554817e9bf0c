// Open-loop load generator for bench/soak: drives `llmchaos serve` on loopback with every fault kind on
// every dialect, streamed and plain, some clients vanishing mid-stream; then checks that nothing the
// generator sent is missing from (or doubled in) the ledger, that the server is healthy, and that its
// RSS came back. Prints the figures; exits 1 when a check fails, 2 on bad usage.
//
//   soak_gen --port P --pid PID [--seconds 60] [--factor 2] [--measure-seconds 3] [--warmup-seconds 1]
//   [--vanish 0.1]
//            [--deadline-ms 2000] [--max-inflight 256] [--rss-tolerance 0.10]
//
// Each request is one connection (Connection: close) with a unique Idempotency-Key, so one request is
// one ledger entry. "Sent" means the whole request was written; a connect that fails is "not sent".
// The rate is factor x the capacity measured first (closed loop, plain ok answers).
#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/core/types.hpp"
#include "llmchaos/net/http_call.hpp"

namespace net = boost::asio;
namespace json = boost::json;
using tcp = net::ip::tcp;
using namespace net::experimental::awaitable_operators;
using llmchaos::Dialect;
using llmchaos::enum_names;
using llmchaos::FaultKind;
using llmchaos::to_string;
namespace client = llmchaos::client;
namespace http = llmchaos::net;  // the blocking admin calls
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
// Every dialect the registry names that the client speaks (client::has_codec), in its order (routes are
// listed dialect-minor).
const std::vector<std::pair<Dialect, std::string_view>> dialects = [] {
  std::vector<std::pair<Dialect, std::string_view>> out;
  for (const auto& d : enum_names<Dialect>::table)
    if (client::has_codec(d.first)) out.push_back(d);
  return out;
}();

struct Config {
  std::uint16_t port = 0;
  int pid = 0;
  double seconds = 60, factor = 2, measure_seconds = 3, warmup_seconds = 1, vanish = 0.1, deadline_ms = 2000,
         rss_tolerance = 0.10;
  std::size_t max_inflight = 256;
};

// Short parameters keep every fault's connection brief; the rest use the fault's defaults (and the
// client deadline bounds them).
std::string fault_params(std::string_view fault) {
  static const std::map<std::string_view, std::string> params = {
      {"rate_429", ", retry_after_ms = 10"},
      {"stream_cut", ", cut_after_events = 2"},
      {"stream_error", ", cut_after_events = 1"},
      {"stream_stall", ", cut_after_events = 1, stall_ms = 100"},
      {"slow_first_token", ", first_token_ms = 50"},
      {"post_commit_timeout", ", hold_ms = 200"},
      {"no_response", ", hold_ms = 200"},
      {"slow", ", p50_ms = 10, p95_ms = 50"}};
  const auto it = params.find(fault);
  return it == params.end() ? "" : it->second;
}

std::string route_name(std::string_view fault, Dialect d) {
  return fmt::format("{}_{}", fault, to_string(d));
}

// One route per (fault kind, dialect): every kind the registry names, with nothing else scripted.
std::string script_toml(std::vector<std::string>& routes) {
  std::string out;
  for (const auto& [kind, name] : enum_names<FaultKind>::table)
    for (const auto& [d, dialect_name] : dialects) {
      routes.push_back(route_name(name, d));
      out += fmt::format(
          "[route.{}]\ndialect = \"{}\"\nscript = [{{ fault = \"{}\", times = 1000000000{} }}]\n\n",
          routes.back(), dialect_name, name, fault_params(name));
    }
  return out;
}

std::string request_bytes(const std::string& route, Dialect d, bool stream, const std::string& key) {
  const auto& codec = client::codec_for(d);
  client::AttemptRequest req;
  req.endpoint = {route, d, ""};
  req.stream = stream;
  const auto body = codec.request_body(req);
  std::string out = fmt::format(
      "POST /{}{} HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\n"
      "content-type: application/json\r\ncontent-length: {}\r\nidempotency-key: {}\r\n",
      route, codec.target(req), body.size(), key);
  for (const auto& [k, v] : codec.headers("soak-key")) out += k + ": " + v + "\r\n";
  return out + "\r\n" + body;
}

struct Stats {
  std::uint64_t scheduled = 0, sent = 0, not_sent_inflight = 0, connect_failed = 0, write_failed = 0;
  std::uint64_t answered = 0, vanished = 0, deadline = 0;
  std::map<int, std::uint64_t> status;  // first status line seen (0: none)
  std::size_t inflight = 0, peak_inflight = 0;
  std::vector<std::string> sent_keys;
};

net::awaitable<void> one_request(tcp::endpoint ep, std::string bytes, std::string key, bool vanish,
                                 double deadline_ms, Stats& st) {
  auto ex = co_await net::this_coro::executor;
  ++st.inflight;
  st.peak_inflight = std::max(st.peak_inflight, st.inflight);
  tcp::socket sock(ex);
  net::steady_timer timer(ex);
  timer.expires_after(std::chrono::milliseconds(static_cast<long>(deadline_ms)));
  auto [cec] = co_await sock.async_connect(ep, use_tuple);
  if (cec) {
    ++st.connect_failed;
    --st.inflight;
    co_return;
  }
  auto [wec, wn] = co_await net::async_write(sock, net::buffer(bytes), use_tuple);
  if (wec) {  // the server may or may not have it: reported, and fails the run
    ++st.write_failed;
    --st.inflight;
    co_return;
  }
  ++st.sent;
  st.sent_keys.push_back(std::move(key));
  std::string head;
  std::array<char, 4096> buf;
  std::size_t got = 0;
  for (;;) {
    auto r = co_await (timer.async_wait(use_tuple) || sock.async_read_some(net::buffer(buf), use_tuple));
    if (r.index() == 0) {
      ++st.deadline;
      break;
    }
    auto [ec, n] = std::get<1>(r);
    if (head.size() < 16) head.append(buf.data(), std::min(n, 16 - head.size()));
    got += n;
    if (ec) {
      ++st.answered;
      break;
    }
    // A client that goes away mid-answer: after the head and some of the stream.
    if (vanish && got > 400) {
      ++st.vanished;
      break;
    }
  }
  int status = 0;
  if (head.size() >= 12 && head.rfind("HTTP/1.1 ", 0) == 0) status = std::atoi(head.c_str() + 9);
  ++st.status[status];
  boost::system::error_code ignore;
  sock.close(ignore);
  --st.inflight;
}

// Closed loop: `workers` clients, one request after another, plain ok answers.
double measure_capacity(const Config& cfg, tcp::endpoint ep) {
  net::io_context ioc;
  Stats st;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double>(cfg.measure_seconds));
  std::uint64_t n = 0;
  for (int w = 0; w < 16; ++w)
    net::co_spawn(
        ioc,
        [&, w]() -> net::awaitable<void> {
          for (int i = 0; Clock::now() < end; ++i) {
            const auto key = fmt::format("measure-{}-{}", w, i);
            co_await one_request(
                ep, request_bytes(route_name("ok", Dialect::openai), Dialect::openai, false, key), key, false,
                cfg.deadline_ms, st);
            ++n;
          }
        },
        net::detached);
  const auto start = Clock::now();
  ioc.run();
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  return static_cast<double>(st.status[200]) / std::max(secs, 1e-3);
}

// Open loop: request i starts at start + i / rate whether or not earlier ones finished (up to
// max_inflight at once: beyond that a request is counted as not sent, never queued).
Stats soak(const Config& cfg, tcp::endpoint ep, const std::vector<std::string>& routes, double rate,
           double seconds) {
  net::io_context ioc;
  Stats st;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  net::co_spawn(
      ioc,
      [&]() -> net::awaitable<void> {
        net::steady_timer tick(ioc);
        const auto start = Clock::now();
        const auto total = static_cast<std::uint64_t>(rate * seconds);
        while (st.scheduled < total) {
          const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
          const auto due = std::min(total, static_cast<std::uint64_t>(elapsed * rate) + 1);
          for (; st.scheduled < due; ++st.scheduled) {
            if (st.inflight >= cfg.max_inflight) {
              ++st.not_sent_inflight;
              continue;
            }
            const auto i = st.scheduled;
            const auto& route = routes[i % routes.size()];
            const Dialect d =
                dialects[i % dialects.size()].first;  // routes are listed dialect-minor, so this matches
            const bool stream = (i / routes.size()) % 2 == 1;
            const auto key = fmt::format("soak-{}", i);
            net::co_spawn(ioc,
                          one_request(ep, request_bytes(route, d, stream, key), key,
                                      stream && u(rng) < cfg.vanish, cfg.deadline_ms, st),
                          net::detached);
          }
          tick.expires_after(std::chrono::milliseconds(1));
          co_await tick.async_wait(use_tuple);
        }
      },
      net::detached);
  ioc.run();  // returns when every request has ended (each is bounded by its deadline)
  return st;
}

// One field of /proc/PID/status in kB (VmRSS = RssAnon + RssFile + RssShmem), -1 when absent.
long status_kb(int pid, std::string_view field) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line))
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
      return std::atol(line.c_str() + field.size() + 1);
  return -1;
}
long rss_kb(int pid) {
  return status_kb(pid, "VmRSS");
}

http::HttpReply admin(const Config& cfg, const std::string& method, const std::string& target,
                      std::string body = {}) {
  http::HttpCall call;
  call.port = cfg.port;
  call.method = method;
  call.target = target;
  call.body = std::move(body);
  call.timeout_ms = 60000;
  return http::http_call(call);
}

void settle(const Config& cfg) {
  // Every attempt finished on the server's side (bounded wait).
  for (int i = 0; i < 200; ++i) {
    const auto m = admin(cfg, "GET", "/metrics").body;
    if (m.find("llmchaos_attempts_in_flight 0\n") != std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

int usage(const char* msg) {
  std::cerr << "soak_gen: " << msg
            << "\nusage: soak_gen --port P --pid PID [--seconds S] [--factor F] "
               "[--measure-seconds S] [--warmup-seconds S] [--vanish P] [--deadline-ms MS] [--max-inflight "
               "N] [--rss-tolerance T]\n";
  return 2;
}

// The options (each takes a number); an error message, or empty.
std::string parse_args(int argc, char** argv, Config& cfg) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (k == "--port")
      cfg.port = static_cast<std::uint16_t>(v);
    else if (k == "--pid")
      cfg.pid = static_cast<int>(v);
    else if (k == "--seconds")
      cfg.seconds = v;
    else if (k == "--warmup-seconds")
      cfg.warmup_seconds = v;
    else if (k == "--factor")
      cfg.factor = v;
    else if (k == "--measure-seconds")
      cfg.measure_seconds = v;
    else if (k == "--vanish")
      cfg.vanish = v;
    else if (k == "--deadline-ms")
      cfg.deadline_ms = v;
    else if (k == "--max-inflight")
      cfg.max_inflight = static_cast<std::size_t>(v);
    else if (k == "--rss-tolerance")
      cfg.rss_tolerance = v;
    else
      return "unknown option " + k;
  }
  if (cfg.port == 0 || cfg.pid <= 0) return "--port and --pid are required";
  return {};
}

// The server's memory, read after its queues settled and its ledger was reset.
struct Rss {
  long total_kb = 0, anon_kb = 0;
};
Rss rss_after_reset(const Config& cfg, int settle_ms) {
  admin(cfg, "POST", "/__llmchaos/reset");
  std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
  return {rss_kb(cfg.pid), status_kb(cfg.pid, "RssAnon")};
}

// Every request sent is in the ledger exactly once, and finished.
struct LedgerAudit {
  std::size_t entries = 0, lost = 0, doubled = 0, unknown = 0, unfinished = 0;
};
LedgerAudit audit_ledger(const Config& cfg, const Stats& st) {
  const auto ledger = json::parse(admin(cfg, "GET", "/__llmchaos/ledger").body).as_array();
  LedgerAudit a;
  a.entries = ledger.size();
  std::map<std::string, int> seen;
  for (const auto& e : ledger) {
    ++seen[std::string(e.at("idempotency_key").as_string())];
    if (!e.at("finished").as_bool()) ++a.unfinished;
  }
  for (const auto& k : st.sent_keys) {
    const auto it = seen.find(k);
    if (it == seen.end())
      ++a.lost;
    else if (it->second > 1)
      ++a.doubled;
  }
  const std::size_t found = st.sent_keys.size() - a.lost;
  a.unknown = a.entries > found ? a.entries - found : 0;
  return a;
}

// Health and a plain ok answer after the soak.
bool healthy_after(const Config& cfg) {
  return admin(cfg, "GET", "/__llmchaos/health").status == 200 &&
         http::http_call({"127.0.0.1",
                          cfg.port,
                          "POST",
                          "/" + route_name("ok", Dialect::openai) + "/v1/chat/completions",
                          client::codec_for(Dialect::openai).request_body({}),
                          {{"content-type", "application/json"}},
                          10000})
                 .status == 200;
}

struct Figures {
  std::size_t routes = 0;
  double capacity = 0, rate = 0, took = 0;
  Rss start, end;
  bool healthy = false;
};

// The report, and the verdict.
bool report(const Config& cfg, const Stats& st, const LedgerAudit& l, const Figures& f) {
  fmt::print(
      "soak: {} routes ({} fault kinds x {} dialects), streamed and plain, vanish {:.0f}% of streams\n",
      f.routes, f.routes / dialects.size(), dialects.size(), cfg.vanish * 100);
  fmt::print(
      "capacity (closed loop, plain ok): {:.0f} req/s; offered {:.0f} req/s ({}x) for {:.1f} s (ran {:.1f} "
      "s)\n",
      f.capacity, f.rate, cfg.factor, cfg.seconds, f.took);
  fmt::print(
      "requests: scheduled {}, sent {}, not sent (in-flight cap {}) {}, connect failed {}, write failed "
      "{}\n",
      st.scheduled, st.sent, cfg.max_inflight, st.not_sent_inflight, st.connect_failed, st.write_failed);
  fmt::print("endings: answered/closed {}, vanished mid-stream {}, client deadline {}; peak in flight {}\n",
             st.answered, st.vanished, st.deadline, st.peak_inflight);
  std::string statuses;
  for (const auto& [s, n] : st.status) statuses += fmt::format(" {}:{}", s, n);
  fmt::print("statuses:{}\n", statuses);
  fmt::print("ledger: {} entries for {} sent; lost {}, doubled {}, unknown {}, unfinished {}\n", l.entries,
             st.sent, l.lost, l.doubled, l.unknown, l.unfinished);
  const double growth = f.start.total_kb > 0 ? static_cast<double>(f.end.total_kb - f.start.total_kb) /
                                                   static_cast<double>(f.start.total_kb)
                                             : 1;
  fmt::print(
      "server RSS: start {} kB, end {} kB ({:+.1f}%; heap and stacks (RssAnon) {} -> {} kB), healthy "
      "after: {}\n",
      f.start.total_kb, f.end.total_kb, growth * 100, f.start.anon_kb, f.end.anon_kb,
      f.healthy ? "yes" : "NO");
  const bool ok = f.healthy && l.entries == st.sent && l.lost == 0 && l.doubled == 0 && l.unfinished == 0 &&
                  st.write_failed == 0 && st.sent > 0 && growth <= cfg.rss_tolerance;
  fmt::print("soak: {}\n", ok ? "PASS" : "FAIL");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  if (const auto error = parse_args(argc, argv, cfg); !error.empty()) return usage(error.c_str());
  try {
    const tcp::endpoint ep{net::ip::make_address("127.0.0.1"), cfg.port};
    std::vector<std::string> routes;
    const auto put = admin(cfg, "PUT", "/__llmchaos/script", script_toml(routes));
    if (put.status != 200) throw std::runtime_error("script PUT refused: " + put.body);

    Figures f;
    f.routes = routes.size();
    f.capacity = measure_capacity(cfg, ep);
    f.rate = std::max(10.0, f.capacity * cfg.factor);
    // The start figure is taken after a short warm-up of the same mix, so it already holds what any
    // run needs once (code pages of every fault path, thread caches) and the check is about retention.
    if (cfg.warmup_seconds > 0) soak(cfg, ep, routes, f.rate, cfg.warmup_seconds);
    settle(cfg);
    f.start = rss_after_reset(cfg, 300);

    const auto t0 = Clock::now();
    const auto st = soak(cfg, ep, routes, f.rate, cfg.seconds);
    f.took = std::chrono::duration<double>(Clock::now() - t0).count();
    settle(cfg);
    const LedgerAudit audit = audit_ledger(cfg, st);
    f.healthy = healthy_after(cfg);
    f.end = rss_after_reset(cfg, 500);
    return report(cfg, st, audit, f) ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "soak_gen: " << e.what() << "\n";
    return 1;
  }
}
