#pragma once
// Writing a whole file or nothing: the content goes to a temporary file beside the target (same file
// system, mode 0644), which is renamed over it once complete. A writer that throws or a failed write
// leaves no file behind and the target as it was. Used by every file llmchaos writes as a result
// (reports, the baseline, experiment tables and figures).
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace llmchaos {

// Streams `write`'s output into `path` atomically, creating the missing parent folders. Throws
// std::runtime_error "PATH: WHAT": creating the folder or the temporary file, the writer's own exception
// (its what() after "PATH: "), a failed write, the rename.
void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);
void write_file_atomic(const std::string& path, std::string_view content);

}  // namespace llmchaos
