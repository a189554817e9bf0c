#pragma once
// One namespace's ledger as the engine keeps it: every attempt, in a compact record, read back as
// LedgerEntry. A LedgerEntry holds eight strings (about 360 bytes, a heap node of its own in a deque,
// plus the path's own allocation); under load the ledger grew by some 400 bytes a request, so a fresh
// page every ten requests, and a first touch of a page costs about 13 us on this kind of VM. A record
// is 72 bytes: the strings a namespace repeats (route, path, model) are interned once, the request id
// the engine makes up ("req_<seq>") is not stored, and the fields most attempts leave empty (client
// idempotency headers, a client's request id, resume fields) live in an extra block allocated only for
// the attempts that have one. The upstream's figures are in the record: the proxy has them for every
// attempt, and an extra block a request grew its heap by a fresh page every 18 requests (bench/README.md).
// The records live in RecordBlocks (record_blocks.hpp): blocks up to 2 MiB, advised as huge pages, since
// first touches of fresh pages were most of its cost.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/mockprovider/script.hpp"
#include "record_blocks.hpp"

namespace llmchaos::mock {

class LedgerStore {
 public:
  // An attempt as the engine begins it: views into the request, the route and the answer, so nothing
  // is copied per attempt but what the record keeps. The other fields of a LedgerEntry start at their
  // defaults (finish() and note_upstream() set them).
  struct NewAttempt {
    std::uint64_t seq = 0;
    std::string_view route, path, model;
    std::string_view request_id;  // empty: the engine's "req_<seq>", rebuilt on reading instead of stored
    std::string_view idempotency_key, stainless_retry_count;
    std::string_view amz_sdk_invocation_id, amz_sdk_request;
    Dialect dialect = Dialect::openai;
    int attempt = 0;
    double received_at_ms = 0;
    double planned_latency_ms = 0;
    bool stream = false;
    FaultKind fault = FaultKind::ok;
    int status = 0;
    bool committed = false;
    bool background = false;
    bool missing_credential = false;
    std::uint64_t resume_of = 0;
    std::int64_t starting_after = -1;
    double retry_hint_ms = 0;
    RetryAfterForm retry_hint_form = RetryAfterForm::none;  // none: no hint sent
    WireProtocol protocol = WireProtocol::none;
  };
  void push_back(const NewAttempt& a);
  void pop_front();
  std::size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }

  // Updates of an entry after begin(): i counts from the oldest kept entry.
  void finish(std::size_t i, AttemptOutcome outcome, int events_sent, int status, double finished_at_ms,
              bool committed);
  void note_upstream(std::size_t i, int upstream_status, double head_ms, double total_ms);
  bool background(std::size_t i) const { return records_.at(i).background; }

  LedgerEntry entry(std::size_t i, const std::string& ns) const;
  void append_to(std::vector<LedgerEntry>& out, const std::string& ns) const;

 private:
  struct Extra {
    std::string idempotency_key;
    std::string stainless_retry_count;
    std::string amz_sdk_invocation_id, amz_sdk_request;
    std::string request_id;  // only when not "req_<seq>"
    std::uint64_t resume_of = 0;
    std::int64_t starting_after = -1;
    double retry_hint_ms = 0;
    RetryAfterForm retry_hint_form = RetryAfterForm::none;
  };
  struct Record {
    std::uint64_t seq = 0;
    double received_at_ms = 0;
    double finished_at_ms = 0;
    double planned_latency_ms = 0;
    double upstream_head_ms = 0;
    double upstream_ms = 0;
    std::unique_ptr<Extra> extra;  // null: every field in it has its default
    std::uint32_t route = 0;       // ids in names_
    std::uint32_t path = 0;
    std::uint32_t model = 0;
    std::int32_t attempt = 0;
    std::int32_t status = 0;
    std::int32_t events_sent = 0;
    std::int32_t upstream_status = 0;
    std::uint8_t dialect = 0;
    std::uint8_t fault = 0;
    std::uint8_t outcome = 0;
    bool stream : 1 = false;
    bool committed : 1 = false;
    bool finished : 1 = false;
    bool background : 1 = false;
    bool default_request_id : 1 = false;
    bool missing_credential : 1 = false;
    bool forwarded : 1 = false;
    std::uint8_t protocol : 2 = 0;  // a WireProtocol
  };

  // The id of `s` in names_. `last` is the id this field had on the previous attempt: a route's
  // attempts repeat their route, path and model, and a comparison costs less than a hash lookup.
  struct Memo {
    std::uint32_t id = UINT32_MAX;
    std::string_view name;  // names_[id] (stable: a deque's elements do not move)
  };
  std::uint32_t intern(std::string_view s, Memo& last);
  Extra& extra(Record& r);

  RecordBlocks<Record> records_;
  std::deque<std::string> names_;  // stable addresses: index_ keys view them
  std::unordered_map<std::string_view, std::uint32_t> index_;
  Memo last_route_, last_path_, last_model_;
};

}  // namespace llmchaos::mock
