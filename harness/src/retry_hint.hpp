#pragma once
// The retry hint an attempt's answer really carried. The mock records it in the ledger (a fault's
// default included: rate_429 sends 1000 ms when the script gives none); a check that read only the
// script's retry_after_ms key judged a wait against a hint the client never saw, or missed one it did.
// An older ledger has no record: then the script step's key, else the fault's default.
#include <optional>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/mockprovider/fault.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace llmchaos::harness {

struct SentHint {
  double ms = 0;  // scaled
  mock::RetryAfterForm form = mock::RetryAfterForm::both;
};

// scale: the time scale, for a script step's (unscaled) key; the ledger's value is scaled already.
inline std::optional<SentHint> sent_retry_hint(const LedgerEntry& e, const mock::Step* step, double scale) {
  if (e.retry_after_sent_ms) {
    const auto form =
        parse_enum<mock::RetryAfterForm>(e.retry_after_form).value_or(mock::RetryAfterForm::both);
    return SentHint{*e.retry_after_sent_ms, form};
  }
  if (e.status < 400 || !step || step->retry_after_form == mock::RetryAfterForm::none) return std::nullopt;
  if (step->retry_after_ms) return SentHint{*step->retry_after_ms * scale, step->retry_after_form};
  if (const auto d = mock::fault_spec(e.fault).traits.default_retry_after_ms)
    return SentHint{*d * scale, step->retry_after_form};
  return std::nullopt;
}

// A hint a client can read as a wait (not absent, not Anthropic's reset-time headers alone).
inline std::optional<SentHint> readable_sent_hint(const LedgerEntry& e, const mock::Step* step,
                                                  double scale) {
  auto h = sent_retry_hint(e, step, scale);
  if (h && !mock::readable_retry_hint(h->form)) h.reset();
  return h;
}

}  // namespace llmchaos::harness
