#pragma once
// Reading a whole file a user named, with the exact path and the reason (errno text) in every error:
// "PATH: cannot open: No such file or directory", "PATH: cannot read: Is a directory". Never a stream
// exception or a std::filesystem_error.
#include <string>

#include "llmchaos/core/spec_error.hpp"

namespace llmchaos {

// The whole file; a directory, a missing or unreadable file throws SpecError({path, 0, 0}, ...).
std::string read_file_text(const std::string& path);

// strerror text of an errno value ("Permission denied").
std::string errno_text(int err);

}  // namespace llmchaos
