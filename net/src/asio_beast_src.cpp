// The one translation unit that compiles Asio and Beast (separate compilation keeps builds short).
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
