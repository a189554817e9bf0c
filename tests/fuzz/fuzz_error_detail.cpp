// ErrorDetail (the classifier's error-body reader) and the classifier's rules on any bytes. Properties:
// both scan paths give the same fields; every value lies inside the body; where the input is one valid
// JSON text without a backslash (so its keys read as written), the fields are those of a full JSON
// reading (tests/client/error_detail_oracle.hpp). The body also goes through classify() as a 429, a
// 400, a 500 and an in-stream error event.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "../client/error_detail_oracle.hpp"
#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/error_detail.hpp"

using namespace llmchaos;
using llmchaos::client::ErrorDetail;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const ErrorDetail fastest(body, ErrorDetail::ScanPath::fastest);
  const ErrorDetail portable(body, ErrorDetail::ScanPath::portable);
  if (fastest.size() != portable.size()) std::abort();
  for (std::size_t i = 0; i < fastest.size(); ++i) {
    const auto a = fastest.field(i), b = portable.field(i);
    if (a.key != b.key || a.scalar != b.scalar || a.value.data() != b.value.data() ||
        a.value.size() != b.value.size())
      std::abort();
    if (a.value.data() < body.data() || a.value.data() + a.value.size() > body.data() + body.size())
      std::abort();
  }
  if (body.find('\\') == std::string_view::npos)
    if (const auto oracle = test::oracle_fields(body);
        oracle && !test::first_difference(fastest, *oracle).empty())
      std::abort();

  client::Observation obs;
  obs.dialect = static_cast<Dialect>(size % 3);
  obs.body = std::string(body);
  for (const int status : {429, 400, 500}) {
    obs.status = status;
    if (client::classify(obs).owner == Owner::none) std::abort();  // an error status is always a failure
  }
  obs.event = client::TransportEvent::stream_error_event;
  if (client::classify(obs).owner != Owner::transient) std::abort();
  return 0;
}
