// The service `--target-command` starts for one case (http driver): its config rendered into a temp
// folder, started in a process group of its own on a free loopback port, awaited until it listens, and
// killed with its stray children when the case ends.
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "http_driver.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "target_config.hpp"

namespace llmchaos::harness::driver_units::http_driver {
namespace {

bool accepts_connections(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (auto at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

std::string read_text(const std::string& path) {
  try {
    return read_file_text(path);
  } catch (const SpecError& e) {  // "PATH: cannot open: REASON"
    throw std::invalid_argument(fmt::format("--target-config {}", e.what()));
  }
}

std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("http driver: socket: {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  ::close(fd);
  if (!ok)
    throw std::runtime_error(fmt::format("http driver: no free loopback port: {}", std::strerror(errno)));
  return ntohs(addr.sin_port);
}

TargetProcess::TargetProcess(const CaseEnv& env, const DriverOptions& o, std::uint16_t port) {
  dir_ = std::filesystem::temp_directory_path() / fmt::format("llmchaos-http-{}-{}", ::getpid(), env.ns);
  std::filesystem::create_directories(dir_);
  const auto config = (dir_ / "target.toml").string();
  if (!o.target_config.empty()) {
    std::ofstream(config) << render_target_config(read_text(o.target_config), o.target_config, env,
                                                  o.target_key, Escape::toml, o.target_route_fields);
  }
  log_ = (dir_ / "target.log").string();
  const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("http driver: {}: {}", log_, std::strerror(errno)));
  command_ = replace_all(replace_all(o.target_command, "{config}", config), "{port}", std::to_string(port));
  try {
    pid_ = spawn_shell(command_, inherited_environment(), fd, fd, "http driver");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

TargetProcess::~TargetProcess() {
  stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void TargetProcess::wait_listening(std::uint16_t port, double bound_ms) {
  const double until = now_ms() + bound_ms;
  while (!accepts_connections(port)) {
    if (auto status = exited())
      throw UnknownVerdict("crash",
                           fmt::format("--target-command exited ({}) before accepting connections on port {}",
                                       describe(*status), port),
                           output());
    if (now_ms() >= until)
      throw UnknownVerdict(
          "hang",
          fmt::format("--target-command did not accept connections on port {} within {:.0f} ms", port,
                      bound_ms),
          output());
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::optional<int> TargetProcess::exited() {
  if (reaped_) return status_;
  if (waitpid(pid_, &status_, WNOHANG) != pid_) return std::nullopt;
  reaped_ = true;
  return status_;
}

std::string TargetProcess::describe(int status) {
  if (WIFSIGNALED(status)) return fmt::format("signal {}", WTERMSIG(status));
  return fmt::format("exit {}", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

void TargetProcess::stop() {
  if (pid_ <= 0) return;
  ::kill(-pid_, SIGKILL);  // the whole group, reaped or not: its stray children too
  if (!reaped_) kill_process_group(pid_);
  reaped_ = true;
  pid_ = 0;
}

std::string TargetProcess::output() const {
  std::ifstream in(log_, std::ios::binary);
  CappedText text(output_cap);
  char buf[8192];
  while (in.read(buf, sizeof buf) || in.gcount() > 0)
    text.append(std::string_view(buf, static_cast<std::size_t>(in.gcount())));
  return "$ " + command_ + "\n" + text.text();
}

}  // namespace llmchaos::harness::driver_units::http_driver
