#pragma once
// What `serve` and `proxy` share (one mock server underneath): the listening and limit options, the
// "listening on" line a caller waits for, and how a start-up error is told.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::app {

// --host (--bind), --port, the admin token's three sources, --insecure-admin, --public-url, --time-scale,
// --seed, --threads and every request limit. `token_file` receives --admin-token-file.
void add_server_options(CLI::App& sub, mock::ServerOptions& server, std::string& token_file);

// After parsing, before start: the admin token from --admin-token, else the first line of
// --admin-token-file, else LLMCHAOS_ADMIN_TOKEN; --public-url checked and without its trailing slash.
// Throws std::invalid_argument naming the problem (an unreadable or empty token file, a bad URL).
void resolve_server_options(mock::ServerOptions& server, const std::string& token_file);

// The warning --insecure-admin prints to stderr when the admin API is open beyond loopback.
void warn_if_admin_open(const mock::ServerOptions& server, std::string_view command);

// "listening on http://HOST:PORT", flushed at once (callers wait for it).
void print_listening(const mock::ServerOptions& server, std::uint16_t port);

// Called inside a catch block: the start-up failure being handled (a SpecErrors list or one error) on
// stderr, each line prefixed "llmchaos COMMAND: "; the exit code 2.
int report_start_error(std::string_view command);

}  // namespace llmchaos::app
