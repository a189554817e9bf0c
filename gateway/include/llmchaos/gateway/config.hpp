#pragma once
// gateway.toml: the client policy format ([workflow], [backoff], [route.NAME]) plus the gateway's own
// tables. Every key is documented in gateway/README.md and examples/gateway.toml. Errors are SpecError
// "file:line:col: table.key: message".
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/limiter.hpp"
#include "llmchaos/client/policy.hpp"
#include "llmchaos/client/transport.hpp"

namespace llmchaos::gateway {

// Keys of [route.NAME] the gateway adds to the policy's own (an upstream route has base_url + dialect).
inline constexpr std::string_view gateway_route_keys[] = {"base_url", "dialect", "weight"};

// Several upstream routes serving one model: the balancer picks one per attempt.
struct ModelGroup {
  std::string name;
  std::vector<std::string> members;  // upstream routes
};

struct Tier {
  std::string name;
  client::RateLimits limits;  // per key of this tier
  std::string quality;        // the tier's default quality chain ("" = the gateway default)
};

struct GatewayConfig {
  std::string file;
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0;
  double time_scale = 1;  // every policy time x this (the harness renders its --time-scale)
  std::string upstream_api_key = "llmchaos-gateway";
  std::size_t max_connections = 256;
  std::string default_quality;                        // "" = the [workflow] chain (primary, then fallback)
  client::Policy policy;                              // [workflow], [backoff], [route.*] (unscaled)
  std::map<std::string, client::Endpoint> upstreams;  // routes with base_url + dialect
  std::map<std::string, double> weights;              // upstream -> balancer weight
  std::map<std::string, ModelGroup> groups;           // [groups.NAME]
  std::map<std::string, Tier> tiers;                  // [tiers.NAME]
  std::map<std::string, std::string> keys;            // API key -> tier
  // Quality chains: name -> routes or groups in order (the first is the primary). "default" is always
  // there: the [workflow] primary followed by its fallback list.
  std::map<std::string, std::vector<std::string>> qualities;
};

GatewayConfig gateway_config_from_toml(std::string_view text, const std::string& source_name);
GatewayConfig load_gateway_config(const std::string& path);

// The policy of one quality chain: the base policy with primary = chain[0], fallback = the rest.
client::Policy chain_policy(const GatewayConfig& config, const std::vector<std::string>& chain);

}  // namespace llmchaos::gateway
