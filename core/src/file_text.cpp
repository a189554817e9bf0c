#include "llmchaos/core/file_text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace llmchaos {

std::string errno_text(int err) {
  return std::strerror(err);
}

std::string read_file_text(const std::string& path, std::string_view what) {
  const std::string named = what.empty() ? std::string() : " " + std::string(what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SpecError({path, 0, 0}, "cannot open" + named + ": " + errno_text(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SpecError({path, 0, 0}, "cannot read" + named + ": " + errno_text(errno));
  if (S_ISDIR(st.st_mode))
    throw SpecError({path, 0, 0},
                    "cannot read" + named + ": " + errno_text(EISDIR) + " (a file is expected)");
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SpecError({path, 0, 0}, "cannot read" + named + ": " + errno_text(errno));
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  return text;
}

}  // namespace llmchaos
