#pragma once
// Every error about user input names where it is: "file:line:col: message".
#include <stdexcept>
#include <string>

namespace llmchaos {

struct SourcePos {
  std::string file;
  int line = 0;  // 1-based; 0 = unknown
  int column = 0;
  std::string str() const;  // "file:line:col" (or "file" when the position is unknown)
};

class SpecError : public std::runtime_error {
 public:
  SpecError(SourcePos pos, const std::string& message);
  const SourcePos& pos() const { return pos_; }
  const std::string& message() const { return message_; }

 private:
  SourcePos pos_;
  std::string message_;
};

}  // namespace llmchaos
