#pragma once
// Reading a whole file a user named, with the exact path and the reason (errno text) in every error:
// "PATH: cannot open: No such file or directory", "PATH: cannot read: Is a directory". Never a stream
// exception or a std::filesystem_error.
#include <string>
#include <string_view>

#include "llmchaos/core/spec_error.hpp"

namespace llmchaos {

// The whole file (pipes too); a directory, a missing or unreadable file throws SpecError({path, 0, 0},
// ...). `what` names the file in the error ("PATH: cannot open the trace file: REASON").
std::string read_file_text(const std::string& path, std::string_view what = {});

// strerror text of an errno value ("Permission denied").
std::string errno_text(int err);

}  // namespace llmchaos
