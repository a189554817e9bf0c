// Asio's SSL support compiled once (separate compilation, as net/src/asio_beast_src.cpp does for the
// rest of Asio and Beast): only `llmchaos proxy`'s TLS upstreams use it.
#include <boost/asio/ssl/impl/src.hpp>
