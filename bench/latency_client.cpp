// bench/latency_client: the latency of one request at a time on one kept-alive connection, every sample
// kept. bench/proxy's concurrency-1 figures come from here, not from wrk: wrk's own tail at -c1 is larger
// than what a proxy adds (bench/README.md, "the latency client"), where this client blocks in read() on
// a TCP_NODELAY socket and reads the monotonic clock around each exchange.
//
//   llmchaos_latency_client URL[,URL...] SECONDS [BODY]   (POST with BODY, else GET; loopback only)
//
// Prints one line per URL, in order: "requests N p50 X p90 X p99 X p99.9 X max X" (microseconds). With
// several URLs (one kept-alive connection each) the requests go round-robin, one at a time, each round
// starting one target later: each target's samples are taken under the same moment-to-moment state of the
// machine as the others', so a comparison of their percentiles is not skewed by what the machine did
// during one target's turn, nor by which target's request came just before. An answer that is not 2xx,
// or not framed by Content-Length or chunked encoding, stops it (the figures would not compare).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "latency_client: %s\n", why.c_str());
  std::exit(1);
}

struct Target {
  std::string host;
  int port = 0;
  std::string path;
};

// "http://127.0.0.1:PORT/path": loopback only (the bench never leaves the machine).
Target parse_url(std::string_view url) {
  constexpr std::string_view scheme = "http://";
  if (!url.starts_with(scheme)) fail("the URL must start with http://");
  url.remove_prefix(scheme.size());
  const auto slash = url.find('/');
  const auto authority = url.substr(0, slash);
  const auto colon = authority.rfind(':');
  if (colon == std::string_view::npos) fail("the URL needs a port");
  Target t{std::string(authority.substr(0, colon)), 0,
           slash == std::string_view::npos ? "/" : std::string(url.substr(slash))};
  const auto digits = authority.substr(colon + 1);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), t.port);
  if (ec != std::errc() || end != digits.data() + digits.size() || t.port <= 0 || t.port > 65535)
    fail("bad port in the URL");
  if (t.host != "127.0.0.1" && t.host != "localhost") fail("loopback only (127.0.0.1)");
  return t;
}

int connect_to(const Target& t) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) fail("socket() failed");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(t.port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fail("connect failed");
  return fd;
}

// One answer read whole from fd into `in` (bytes past it are kept for the next one).
class AnswerReader {
 public:
  explicit AnswerReader(int fd) : fd_(fd) {}

  void read_answer() {
    const std::size_t head_end = until([&] { return in_.find("\r\n\r\n"); });
    const std::string_view head(in_.data(), head_end);
    if (head.size() < 12 || !head.starts_with("HTTP/1.1 2")) fail("not a 2xx answer: " + std::string(head));
    std::size_t at = head_end + 4;
    if (const auto length = content_length(head)) {
      until([&] { return in_.size() >= at + *length ? at : std::string::npos; });
      in_.erase(0, at + *length);
    } else if (chunked(head)) {
      for (;;) {  // size line, data, CRLF; the last chunk (0) and the empty trailer end it
        const std::size_t line_end = until([&] { return in_.find("\r\n", at); });
        std::size_t size = 0;
        const auto [end, ec] = std::from_chars(in_.data() + at, in_.data() + line_end, size, 16);
        if (ec != std::errc()) fail("bad chunk size");
        (void)end;
        at = line_end + 2;
        until([&] { return in_.size() >= at + size + 2 ? at : std::string::npos; });
        at += size + 2;
        if (size == 0) break;
      }
      in_.erase(0, at);
    } else {
      fail("an answer framed neither by Content-Length nor chunked");
    }
  }

 private:
  // Reads until found() gives a position; returns it.
  template <class Found>
  std::size_t until(Found found) {
    for (;;) {
      if (const std::size_t p = found(); p != std::string::npos) return p;
      char buf[16 * 1024];
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n <= 0) fail("the server closed the connection");
      in_.append(buf, static_cast<std::size_t>(n));
    }
  }
  static std::optional<std::size_t> content_length(std::string_view head) {
    const auto v = field(head, "content-length:");
    if (!v) return std::nullopt;
    std::size_t n = 0;
    if (std::from_chars(v->data(), v->data() + v->size(), n).ec != std::errc()) fail("bad Content-Length");
    return n;
  }
  static bool chunked(std::string_view head) {
    const auto v = field(head, "transfer-encoding:");
    return v && v->find("chunked") != std::string_view::npos;
  }
  // The value of a field (name lower-case, with its colon), spaces trimmed.
  static std::optional<std::string_view> field(std::string_view head, std::string_view name) {
    for (std::size_t at = head.find("\r\n"); at != std::string_view::npos;) {
      const auto next = head.find("\r\n", at + 2);
      const auto line = head.substr(at + 2, next == std::string_view::npos ? next : next - at - 2);
      at = next;
      if (line.size() < name.size()) continue;
      if (!std::equal(name.begin(), name.end(), line.begin(),
                      [](char a, char b) { return a == (b >= 'A' && b <= 'Z' ? b + 32 : b); }))
        continue;
      auto v = line.substr(name.size());
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    return std::nullopt;
  }

  int fd_;
  std::string in_;
};

double percentile(const std::vector<double>& sorted, double p) {
  const auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(sorted.size()));
  return sorted[std::min(i, sorted.size() - 1)];
}

// The request for one target: POST with body, else GET.
std::string request_for(const Target& target, const std::string& body) {
  std::string request = (body.empty() ? "GET " : "POST ") + target.path +
                        " HTTP/1.1\r\nHost: " + target.host + ":" + std::to_string(target.port) +
                        "\r\nAuthorization: Bearer sk-bench\r\n";
  if (!body.empty())
    request += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return request + "\r\n" + body;
}

// One target's connection, its request and its samples.
struct Lane {
  int fd;
  std::string request;
  AnswerReader reader;
  std::vector<double> us;
};

void print_percentiles(std::vector<double>& us) {
  if (us.empty()) fail("no request completed");
  std::sort(us.begin(), us.end());
  std::printf("requests %zu p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n", us.size(), percentile(us, 50),
              percentile(us, 90), percentile(us, 99), percentile(us, 99.9), us.back());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::fprintf(stderr, "usage: llmchaos_latency_client URL[,URL...] SECONDS [BODY]\n");
    return 2;
  }
  const double seconds = std::atof(argv[2]);
  if (!(seconds > 0 && seconds <= 600)) fail("SECONDS must be above 0 and at most 600");
  const std::string body = argc == 4 ? argv[3] : "";
  std::vector<Lane> lanes;
  constexpr std::size_t max_lanes = 8;
  for (std::string_view urls = argv[1]; !urls.empty();) {
    const auto comma = urls.find(',');
    const Target target = parse_url(urls.substr(0, comma));
    if (lanes.size() == max_lanes) fail("at most 8 URLs");
    const int fd = connect_to(target);
    lanes.push_back(Lane{fd, request_for(target, body), AnswerReader(fd), {}});
    lanes.back().us.reserve(1 << 20);
    urls = comma == std::string_view::npos ? std::string_view{} : urls.substr(comma + 1);
  }
  if (lanes.empty()) fail("no URL");
  constexpr std::size_t max_requests = 20'000'000;  // bounded whatever the speed
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  std::size_t done_requests = 0;
  std::size_t round = 0;
  for (auto now = Clock::now(); now < end && done_requests < max_requests; ++round) {
    // Each round starts one lane later: no lane always follows another.
    for (std::size_t j = 0; j < lanes.size(); ++j) {
      auto& lane = lanes[(round + j) % lanes.size()];
      if (::write(lane.fd, lane.request.data(), lane.request.size()) !=
          static_cast<ssize_t>(lane.request.size()))
        fail("writing the request failed");
      lane.reader.read_answer();
      const auto done = Clock::now();
      lane.us.push_back(std::chrono::duration<double, std::micro>(done - now).count());
      now = done;
      ++done_requests;
    }
  }
  for (auto& lane : lanes) {
    ::close(lane.fd);
    print_percentiles(lane.us);
  }
  return 0;
}
