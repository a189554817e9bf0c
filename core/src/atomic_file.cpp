#include "llmchaos/core/atomic_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace llmchaos {
namespace {
[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}
}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) fail(path, "creating " + target.parent_path().string() + ": " + ec.message());
  }
  // Beside the target, so the rename stays on one file system (atomic); a unique name, so two writers
  // of one path never share a temporary file.
  std::string temp = (target.has_parent_path() ? target.parent_path() / "" : fs::path()).string() + "." +
                     target.filename().string() + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "creating a temporary file " + temp + ": " + std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp makes 0600; what llmchaos writes is for everyone who reads the build
  ::close(fd);
  const auto discard = [&] {
    std::error_code ignored;
    fs::remove(temp, ignored);
  };
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    try {
      write(out);
    } catch (const std::exception& e) {
      out.close();
      discard();
      fail(path, e.what());
    }
    out.flush();
    if (!out) {
      discard();
      fail(path, "writing " + temp + " failed");
    }
  }
  fs::rename(temp, target, ec);
  if (ec) {
    discard();
    fail(path, "renaming " + temp + ": " + ec.message());
  }
}

void write_file_atomic(const std::string& path, std::string_view content) {
  write_file_atomic(path, [&](std::ostream& out) {
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  });
}

}  // namespace llmchaos
