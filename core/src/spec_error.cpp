#include "llmchaos/core/spec_error.hpp"

#include <fmt/format.h>

namespace llmchaos {

std::string SourcePos::str() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

SpecError::SpecError(SourcePos pos, const std::string& message)
    : std::runtime_error(fmt::format("{}: {}", pos.str(), message)),
      pos_(std::move(pos)),
      message_(message) {}

SpecErrors::SpecErrors(std::vector<SpecError> all) : SpecError(all.at(0)), all_(std::move(all)) {}

void throw_errors(std::vector<SpecError> errors) {
  if (errors.size() == 1) throw errors.front();
  if (!errors.empty()) throw SpecErrors(std::move(errors));
}

}  // namespace llmchaos
