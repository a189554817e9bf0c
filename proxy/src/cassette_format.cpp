// The cassette file (format 1, proxy/CASSETTES.md): written as JSON with one frame per line, read
// back with every error at file:line:col. Pure functions, except lint_cassette_file's one read.
#include <fmt/format.h>
#include <sys/stat.h>

#include <boost/json.hpp>

#include "llmchaos/core/base64.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/proxy/cassette.hpp"

namespace json = boost::json;

namespace llmchaos::proxy {
namespace {

std::string quoted(std::string_view s) {
  return json::serialize(json::string(s));
}
std::string ms(double v) {
  return fmt::format("{:.3f}", v);
}

std::string header_list(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = "[";
  for (std::size_t i = 0; i < headers.size(); ++i)
    out += fmt::format("{}[{}, {}]", i ? ", " : "", quoted(headers[i].first), quoted(headers[i].second));
  return out + "]";
}

SourcePos pos_at(std::string_view text, std::size_t offset, const std::string& file) {
  SourcePos p{file, 1, 1};
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

// Where a member is written (its first "name": in the text), else the start of the file: JSON values carry
// no positions, so a semantic error points at the member's name.
SourcePos member_pos(std::string_view text, std::string_view name, const std::string& file) {
  const auto at = text.find(fmt::format("\"{}\"", name));
  return pos_at(text, at == std::string_view::npos ? 0 : at, file);
}

// Reads the members of one object, collecting every error.
class Reader {
 public:
  Reader(std::string_view text, const std::string& file, std::vector<SpecError>& errors)
      : text_(text), file_(file), errors_(errors) {}

  const json::value* member(const json::object& o, std::string_view name, std::string_view context) {
    const auto* v = o.if_contains(name);
    if (!v) error(name, fmt::format("{}: missing the member \"{}\"", context, name));
    return v;
  }
  std::string string(const json::object& o, std::string_view name, std::string_view context) {
    const auto* v = member(o, name, context);
    if (!v) return {};
    if (!v->is_string()) {
      error(name, fmt::format("{}.{}: expected a string", context, name));
      return {};
    }
    return std::string(v->as_string());
  }
  double number(const json::object& o, std::string_view name, std::string_view context) {
    const auto* v = member(o, name, context);
    if (!v) return 0;
    if (!v->is_number()) {
      error(name, fmt::format("{}.{}: expected a number", context, name));
      return 0;
    }
    const double d = v->to_number<double>();
    if (!(d >= 0 && d <= 86'400'000.0)) {
      error(name, fmt::format("{}.{}: expected milliseconds from 0 to 86400000, got {}", context, name, d));
      return 0;
    }
    return d;
  }
  bool boolean(const json::object& o, std::string_view name, std::string_view context) {
    const auto* v = member(o, name, context);
    if (v && !v->is_bool()) error(name, fmt::format("{}.{}: expected true or false", context, name));
    return v && v->is_bool() && v->as_bool();
  }
  const json::object* object(const json::object& o, std::string_view name, std::string_view context) {
    const auto* v = member(o, name, context);
    if (v && !v->is_object()) error(name, fmt::format("{}.{}: expected an object", context, name));
    return v ? v->if_object() : nullptr;
  }
  std::vector<std::pair<std::string, std::string>> headers(const json::object& o, std::string_view context) {
    std::vector<std::pair<std::string, std::string>> out;
    const auto* v = member(o, "headers", context);
    if (!v) return out;
    const auto* a = v->if_array();
    bool bad = !a;
    if (a)
      for (const auto& h : *a) {
        const auto* pair = h.if_array();
        if (!pair || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string()) {
          bad = true;
          break;
        }
        out.emplace_back(std::string((*pair)[0].as_string()), std::string((*pair)[1].as_string()));
      }
    if (bad)
      error("headers", fmt::format("{}.headers: expected an array of [name, value] string pairs", context));
    return out;
  }
  void error(std::string_view name, std::string message) {
    errors_.emplace_back(member_pos(text_, name, file_), std::move(message));
  }

 private:
  std::string_view text_;
  const std::string& file_;
  std::vector<SpecError>& errors_;
};

// The cassette's JSON object; a SpecError at the first syntax error (the rest cannot be read past it).
json::value parse_document(std::string_view text, const std::string& file) {
  if (text.size() > cassette_size_limit)
    throw SpecError({file, 0, 0}, fmt::format("a cassette of {} bytes is larger than the limit ({} bytes)",
                                              text.size(), cassette_size_limit));
  json::parse_options options;
  options.max_depth = 32;
  json::parser parser({}, options);
  boost::system::error_code ec;
  const auto used = parser.write_some(text.data(), text.size(), ec);
  if (!ec && used < text.size()) {  // only white space may follow the document
    const auto rest = text.find_first_not_of(" \t\r\n", used);
    if (rest != std::string_view::npos)
      throw SpecError(pos_at(text, rest, file), "invalid JSON: text after the cassette's object");
  }
  if (ec) throw SpecError(pos_at(text, used, file), fmt::format("invalid JSON: {}", ec.message()));
  json::value doc;
  try {
    doc = parser.release();  // throws when the text ended inside the document
  } catch (const std::exception&) {
    throw SpecError(pos_at(text, text.size(), file), "invalid JSON: the text ends inside the document");
  }
  if (!doc.is_object()) throw SpecError(pos_at(text, 0, file), "a cassette is a JSON object");
  return doc;
}

void read_request(Reader& r, const json::object& req, Cassette& c) {
  const auto dialect = r.string(req, "dialect", "request");
  if (auto d = parse_enum<Dialect>(dialect))
    c.dialect = *d;
  else if (req.contains("dialect") && req.at("dialect").is_string())
    r.error("dialect", fmt::format("request.dialect: unknown dialect \"{}\"", dialect));
  c.method = r.string(req, "method", "request");
  c.path = r.string(req, "path", "request");
  c.request_headers = r.headers(req, "request");
  c.request_body = r.string(req, "body", "request");
}

// A frame's bytes: `bytes` (text), or `bytes_base64` (a binary frame: an AWS event stream message).
std::string frame_bytes(Reader& r, const json::object& f, const std::string& context) {
  const auto* encoded = f.if_contains("bytes_base64");
  if (!encoded) return r.string(f, "bytes", context);
  auto bytes = encoded->is_string() ? base64::decode(encoded->get_string()) : std::nullopt;
  if (!bytes) r.error("bytes_base64", context + ".bytes_base64: expected base64 text (RFC 4648, padded)");
  return bytes.value_or(std::string());
}

// The frames in time order; a frame without a readable at_ms is left out (its error is already said).
void read_frames(Reader& r, const json::value& frames, Cassette& c) {
  if (!frames.is_array()) {
    r.error("frames", "response.frames: expected an array");
    return;
  }
  std::size_t i = 0;
  double last = 0;
  for (const auto& f : frames.as_array()) {
    const auto context = fmt::format("response.frames[{}]", i++);
    if (!f.is_object()) {
      r.error("frames", context + ": expected an object {\"at_ms\": N, \"bytes\": \"...\"}");
      continue;
    }
    CassetteFrame frame{r.number(f.as_object(), "at_ms", context), frame_bytes(r, f.as_object(), context)};
    const auto* at = f.as_object().if_contains("at_ms");
    if (!at || !at->is_number()) continue;
    if (frame.at_ms < last)
      r.error("frames",
              fmt::format("{}.at_ms: {} is before the frame ahead of it ({})", context, frame.at_ms, last));
    last = frame.at_ms;
    c.frames.push_back(std::move(frame));
  }
}

void read_response(Reader& r, const json::object& res, Cassette& c) {
  if (const auto* s = r.member(res, "status", "response")) {
    if (!s->is_int64() || s->as_int64() < 100 || s->as_int64() > 599)
      r.error("status", "response.status: expected an HTTP status from 100 to 599");
    else
      c.status = static_cast<int>(s->as_int64());
  }
  c.headers = r.headers(res, "response");
  c.head_ms = r.number(res, "head_ms", "response");
  c.streamed = r.boolean(res, "streamed", "response");
  c.end_ms = r.number(res, "end_ms", "response");
  c.body = r.string(res, "body", "response");
  if (const auto* frames = r.member(res, "frames", "response")) read_frames(r, *frames, c);
  if (!c.streamed && !c.frames.empty())
    r.error("frames", "response.frames: a cassette with streamed = false has a body, not frames");
}

}  // namespace

std::string cassette_json(const Cassette& c) {
  std::string out = "{\n";
  out += fmt::format("  \"format\": {},\n  \"key\": {},\n", c.format, quoted(c.key));
  out += fmt::format("  \"request\": {{\n    \"dialect\": {},\n    \"method\": {},\n    \"path\": {},\n",
                     quoted(to_string(c.dialect)), quoted(c.method), quoted(c.path));
  out += fmt::format("    \"headers\": {},\n    \"body\": {}\n  }},\n", header_list(c.request_headers),
                     quoted(c.request_body));
  out += fmt::format("  \"response\": {{\n    \"status\": {},\n    \"headers\": {},\n    \"head_ms\": {},\n",
                     c.status, header_list(c.headers), ms(c.head_ms));
  out += fmt::format("    \"streamed\": {},\n    \"end_ms\": {},\n    \"body\": {},\n    \"frames\": [",
                     c.streamed ? "true" : "false", ms(c.end_ms), quoted(c.body));
  // A binary framing's frames as base64 (JSON strings hold text, not any byte).
  const bool binary = stream_framing(c.dialect) != mock::StreamFraming::sse;
  for (std::size_t i = 0; i < c.frames.size(); ++i)
    out += fmt::format("{}\n      {{\"at_ms\": {}, \"{}\": {}}}", i ? "," : "", ms(c.frames[i].at_ms),
                       binary ? "bytes_base64" : "bytes",
                       quoted(binary ? base64::encode(c.frames[i].bytes) : c.frames[i].bytes));
  out += c.frames.empty() ? "]\n" : "\n    ]\n";
  out += "  }\n}\n";
  return out;
}

Cassette parse_cassette(std::string_view text, const std::string& file) {
  const json::value doc = parse_document(text, file);
  const auto& top = doc.as_object();
  std::vector<SpecError> errors;
  Reader r(text, file, errors);
  Cassette c;
  if (const auto* f = r.member(top, "format", "cassette")) {
    if (!f->is_int64() || f->as_int64() != cassette_format)
      throw SpecError(member_pos(text, "format", file),
                      fmt::format("format: this llmchaos reads cassette format {}, the file has {}",
                                  cassette_format, json::serialize(*f)));
  } else {
    throw_errors(std::move(errors));
  }
  c.key = r.string(top, "key", "cassette");
  if (const auto* req = r.object(top, "request", "cassette")) read_request(r, *req, c);
  if (const auto* res = r.object(top, "response", "cassette")) read_response(r, *res, c);
  throw_errors(std::move(errors));
  return c;
}

std::vector<SpecError> lint_cassette_file(const std::string& path) {
  std::vector<SpecError> errors;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && static_cast<std::size_t>(st.st_size) > cassette_size_limit) {
    errors.emplace_back(SourcePos{path, 0, 0},
                        fmt::format("a cassette of {} bytes is larger than the limit ({} bytes)", st.st_size,
                                    cassette_size_limit));
    return errors;
  }
  collect_errors(errors, [&] {
    const auto c = parse_cassette(read_file_text(path, "cassette"), path);
    const auto name = path.substr(path.find_last_of('/') + 1);
    if (name != cassette_file_name(c.key))
      throw SpecError({path, 0, 0}, fmt::format("key: the file of key \"{}\" is named {}, not {}", c.key,
                                                cassette_file_name(c.key), name));
    const auto key = cassette_key(c.dialect, c.method, c.path, c.request_body);
    if (key != c.key)
      throw SpecError(
          {path, 0, 0},
          fmt::format("key: the request hashes to \"{}\", the file says \"{}\" (an edited request?)", key,
                      c.key));
  });
  return errors;
}

}  // namespace llmchaos::proxy
