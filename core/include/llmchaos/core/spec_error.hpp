#pragma once
// Every error about user input names where it is: "file:line:col: message".
#include <stdexcept>
#include <string>
#include <vector>

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

// Several errors found at once (every unknown key of a table, every broken step of a route), so lint
// shows them all; what() and pos() are the first's. Catch it before SpecError to keep them all.
class SpecErrors : public SpecError {
 public:
  explicit SpecErrors(std::vector<SpecError> all);  // at least one
  const std::vector<SpecError>& all() const { return all_; }

 private:
  std::vector<SpecError> all_;
};

// Runs `section`; a SpecError (or every error of a SpecErrors) is appended to `errors`. True on success.
template <class F>
bool collect_errors(std::vector<SpecError>& errors, F&& section) {
  try {
    section();
    return true;
  } catch (const SpecErrors& e) {
    errors.insert(errors.end(), e.all().begin(), e.all().end());
  } catch (const SpecError& e) {
    errors.push_back(e);
  }
  return false;
}

// Throws nothing when `errors` is empty, the one error, or a SpecErrors of all of them.
void throw_errors(std::vector<SpecError> errors);

}  // namespace llmchaos
