#pragma once
// What `serve` and `proxy` share (one mock server underneath): the listening and limit options, the
// "listening on" line a caller waits for, and how a start-up error is told.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string_view>

#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::app {

// --bind, --port, --admin-token, --time-scale, --seed, --threads and every request limit.
void add_server_options(CLI::App& sub, mock::ServerOptions& server);

// "listening on http://HOST:PORT", flushed at once (callers wait for it).
void print_listening(const mock::ServerOptions& server, std::uint16_t port);

// Called inside a catch block: the start-up failure being handled (a SpecErrors list or one error) on
// stderr, each line prefixed "llmchaos COMMAND: "; the exit code 2.
int report_start_error(std::string_view command);

}  // namespace llmchaos::app
