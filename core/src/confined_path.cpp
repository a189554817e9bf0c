#include "llmchaos/core/confined_path.hpp"

#include <system_error>

namespace llmchaos {

namespace fs = std::filesystem;

std::optional<fs::path> confined_path(const fs::path& root, const fs::path& requested) {
  const auto path = (requested.is_absolute() ? requested : root / requested).lexically_normal();
  const auto rel = path.lexically_relative(root);
  if (rel.empty() || *rel.begin() == "..") return std::nullopt;
  return path;
}

std::optional<fs::path> confined_existing_path(const fs::path& root, const fs::path& requested) {
  std::error_code ec;
  const auto real_root = fs::weakly_canonical(fs::absolute(root, ec), ec);
  if (ec) return std::nullopt;
  const auto lexical = confined_path(real_root, requested);
  if (!lexical) return std::nullopt;
  const auto real = fs::weakly_canonical(*lexical, ec);
  if (ec) return std::nullopt;
  return confined_path(real_root, real);
}

}  // namespace llmchaos
