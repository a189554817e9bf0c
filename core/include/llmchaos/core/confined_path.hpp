#pragma once
// A path named by a remote caller (a session's case_path, a case's policy file, a reports folder) kept
// inside the folder the server was started with.
#include <filesystem>
#include <optional>

namespace llmchaos {

// `requested` (a relative one resolves against `root`) as an absolute, normal path inside `root`, or
// nullopt when it is outside: absolute elsewhere, or climbing out with "..". Pure: `root` is absolute
// and normal, nothing is read from the disk.
std::optional<std::filesystem::path> confined_path(const std::filesystem::path& root,
                                                   const std::filesystem::path& requested);

// The same after resolving symbolic links (std::filesystem::weakly_canonical) of `root` and of the
// path, so a link inside `root` that points out of it is outside too.
std::optional<std::filesystem::path> confined_existing_path(const std::filesystem::path& root,
                                                            const std::filesystem::path& requested);

}  // namespace llmchaos
