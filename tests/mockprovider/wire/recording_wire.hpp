#pragma once
// A ClientWire that writes nothing and records what it is asked, one line per call ("head 200 chunked",
// "head+chunk BYTES", "chunk BYTES", "wait 30", "last", ...): what a plan's execution or a proxy's
// delivery does on the client's connection, call by call, without a socket. Waits end at once
// (elapsed). `one_write_head_and_chunk` false: the base class's default (a head, then a chunk).
#include <fmt/format.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/mockprovider/forward_hook.hpp"

namespace llmchaos::testing {

class RecordingWire : public mock::ClientWire {
 public:
  explicit RecordingWire(boost::asio::any_io_executor executor, std::vector<std::string>& log)
      : executor_(std::move(executor)), log_(log) {}
  bool one_write_head_and_chunk = true;
  bool writes_fail = false;  // every write after this is set says the client is gone

  boost::asio::any_io_executor executor() override { return executor_; }
  boost::asio::awaitable<bool> write_head(int status, const mock::HeaderList&, bool chunked,
                                          std::size_t length, bool) override {
    log_.push_back(chunked ? fmt::format("head {} chunked", status)
                           : fmt::format("head {} length {}", status, length));
    co_return !writes_fail;
  }
  boost::asio::awaitable<bool> write_chunk(std::string_view bytes) override {
    log_.push_back("chunk " + std::string(bytes));
    co_return !writes_fail;
  }
  boost::asio::awaitable<bool> write_head_and_chunk(int status, const mock::HeaderList& headers,
                                                    bool keep_alive, std::string_view first_chunk) override {
    if (!one_write_head_and_chunk)
      co_return co_await ClientWire::write_head_and_chunk(status, headers, keep_alive, first_chunk);
    log_.push_back("head+chunk " + std::string(first_chunk));
    co_return !writes_fail;
  }
  boost::asio::awaitable<bool> write_last_chunk() override {
    log_.push_back("last");
    co_return !writes_fail;
  }
  boost::asio::awaitable<bool> write_body(std::string_view bytes) override {
    log_.push_back("body " + std::string(bytes));
    co_return !writes_fail;
  }
  boost::asio::awaitable<bool> write_whole(int status, const mock::HeaderList&, std::string_view body,
                                           bool) override {
    log_.push_back(fmt::format("whole {} {}", status, body));
    co_return !writes_fail;
  }
  boost::asio::awaitable<mock::WaitEnd> wait(double ms) override {
    log_.push_back(fmt::format("wait {}", ms));
    co_return mock::WaitEnd::elapsed;
  }
  void reset() override { log_.push_back("reset"); }

 private:
  boost::asio::any_io_executor executor_;
  std::vector<std::string>& log_;
};

// Runs an awaitable to its end on a fresh io_context; rethrows what it threw.
template <class T>
T run_to_end(boost::asio::io_context& ioc, boost::asio::awaitable<T> work) {
  std::optional<T> out;
  std::exception_ptr error;
  boost::asio::co_spawn(ioc, std::move(work), [&](std::exception_ptr e, T v) {
    error = e;
    if (!e) out = std::move(v);
  });
  ioc.run();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

inline void run_to_end(boost::asio::io_context& ioc, boost::asio::awaitable<void> work) {
  std::exception_ptr error;
  boost::asio::co_spawn(ioc, std::move(work), [&](std::exception_ptr e) { error = e; });
  ioc.run();
  if (error) std::rethrow_exception(error);
}

}  // namespace llmchaos::testing
