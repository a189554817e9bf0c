#pragma once
// An admin endpoint the app adds to the mock's control plane (`serve`'s session API, harness/sessions/):
// the mock knows only this interface, never who implements it. The router asks it after the admin
// token check; the server calls it off its I/O threads, so a handler may block (wait for the ledger to
// settle) without stalling the attempts it waits for.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmchaos::mock {

struct RawRequest;  // router.hpp

struct AdminReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers = {};  // more headers (a 429's retry-after)
};

class AdminExtension {
 public:
  virtual ~AdminExtension() = default;
  // Whether `path` (below /__llmchaos/, e.g. "sessions/abc/finish") is this extension's.
  virtual bool handles(std::string_view path) const = 0;
  // The answer to a request on one of its paths. May block; may be called from several threads at once.
  virtual AdminReply handle(const RawRequest& request, std::string_view path) = 0;
};

}  // namespace llmchaos::mock
