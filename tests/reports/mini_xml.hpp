#pragma once
// A strict little XML 1.0 reader for the report tests: elements, attributes, text, character and the
// five predefined entity references, comments and the declaration. It throws on anything that is not
// well-formed (unbalanced tags, unquoted or duplicate attributes, a bare '&' or '<', characters XML 1.0
// forbids, invalid UTF-8), which is what the JUnit writer must never produce.
#include <cctype>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mini_xml {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<std::unique_ptr<Element>> children;
  std::string text;  // all character data directly inside, entities decoded

  std::vector<const Element*> all(std::string_view n) const {  // descendants named n, document order
    std::vector<const Element*> out;
    for (const auto& c : children) {
      if (c->name == n) out.push_back(c.get());
      auto deeper = c->all(n);
      out.insert(out.end(), deeper.begin(), deeper.end());
    }
    return out;
  }
  const std::string& attr(const std::string& n) const {
    auto it = attrs.find(n);
    if (it == attrs.end()) throw std::runtime_error("no attribute " + n + " on <" + name + ">");
    return it->second;
  }
};

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) { check_chars(); }

  std::unique_ptr<Element> document() {
    skip_misc();
    auto root = element();
    skip_misc();
    if (pos_ != s_.size()) fail("content after the root element");
    return root;
  }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("XML not well-formed at byte " + std::to_string(pos_) + ": " + what);
  }

  // XML 1.0 Char production over valid UTF-8.
  void check_chars() {
    for (std::size_t i = 0; i < s_.size();) {
      auto b = static_cast<unsigned char>(s_[i]);
      std::uint32_t cp;
      std::size_t n;
      if (b < 0x80)
        cp = b, n = 1;
      else if ((b & 0xE0) == 0xC0)
        cp = b & 0x1F, n = 2;
      else if ((b & 0xF0) == 0xE0)
        cp = b & 0x0F, n = 3;
      else if ((b & 0xF8) == 0xF0)
        cp = b & 0x07, n = 4;
      else {
        pos_ = i;
        fail("invalid UTF-8 lead byte");
      }
      if (i + n > s_.size()) {
        pos_ = i;
        fail("truncated UTF-8");
      }
      for (std::size_t k = 1; k < n; ++k) {
        auto c = static_cast<unsigned char>(s_[i + k]);
        if ((c & 0xC0) != 0x80) {
          pos_ = i;
          fail("invalid UTF-8 continuation");
        }
        cp = (cp << 6) | (c & 0x3F);
      }
      const bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
      const bool legal = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (overlong || !legal) {
        pos_ = i;
        fail("character not allowed in XML 1.0");
      }
      i += n;
    }
  }

  bool starts(std::string_view t) const { return s_.substr(pos_, t.size()) == t; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  void skip_until(std::string_view end) {
    auto e = s_.find(end, pos_);
    if (e == std::string_view::npos) fail("unterminated construct");
    pos_ = e + end.size();
  }
  void skip_misc() {
    for (;;) {
      skip_ws();
      if (starts("<?"))
        skip_until("?>");
      else if (starts("<!--"))
        skip_until("-->");
      else
        return;
    }
  }
  std::string name() {
    auto start = pos_;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == ':')
        ++pos_;
      else
        break;
    }
    if (pos_ == start) fail("expected a name");
    return std::string(s_.substr(start, pos_ - start));
  }
  static void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80)
      out += static_cast<char>(cp);
    else if (cp < 0x800)
      out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F));
    else if (cp < 0x10000)
      out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
          out += static_cast<char>(0x80 | (cp & 0x3F));
    else
      out += static_cast<char>(0xF0 | (cp >> 18)), out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F)),
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F)), out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  void reference(std::string& out) {
    auto end = s_.find(';', pos_);
    if (end == std::string_view::npos || end - pos_ > 12) fail("bare '&'");
    auto ref = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    if (ref == "amp")
      out += '&';
    else if (ref == "lt")
      out += '<';
    else if (ref == "gt")
      out += '>';
    else if (ref == "quot")
      out += '"';
    else if (ref == "apos")
      out += '\'';
    else if (ref.size() > 1 && ref[0] == '#') {
      const bool hex = ref[1] == 'x';
      std::uint32_t cp = static_cast<std::uint32_t>(
          std::stoul(std::string(ref.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10));
      const bool legal = cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) ||
                         (cp >= 0xE000 && cp <= 0xFFFD) || (cp >= 0x10000 && cp <= 0x10FFFF);
      if (!legal) fail("character reference to a character XML 1.0 forbids");
      append_utf8(out, cp);
    } else {
      fail("unknown entity &" + std::string(ref) + ";");
    }
  }
  std::string attribute_value() {
    if (pos_ >= s_.size() || (s_[pos_] != '"' && s_[pos_] != '\'')) fail("unquoted attribute value");
    const char quote = s_[pos_++];
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      char c = s_[pos_];
      if (c == '<') fail("'<' in an attribute value");
      if (c == '&') {
        reference(out);
        continue;
      }
      // Attribute-value normalisation: literal whitespace characters become spaces.
      out += (c == '\n' || c == '\t' || c == '\r') ? ' ' : c;
      ++pos_;
    }
    if (pos_ >= s_.size()) fail("unterminated attribute value");
    ++pos_;
    return out;
  }
  std::unique_ptr<Element> element() {
    if (!starts("<")) fail("expected '<'");
    ++pos_;
    auto el = std::make_unique<Element>();
    el->name = name();
    for (;;) {
      const auto before = pos_;
      skip_ws();
      if (starts("/>")) {
        pos_ += 2;
        return el;
      }
      if (starts(">")) {
        ++pos_;
        break;
      }
      if (pos_ == before) fail("expected whitespace before an attribute");
      auto key = name();
      skip_ws();
      if (!starts("=")) fail("expected '=' after attribute " + key);
      ++pos_;
      skip_ws();
      if (!el->attrs.emplace(key, attribute_value()).second) fail("duplicate attribute " + key);
    }
    for (;;) {
      if (pos_ >= s_.size()) fail("unterminated element <" + el->name + ">");
      if (starts("</")) {
        pos_ += 2;
        if (name() != el->name) fail("mismatched end tag for <" + el->name + ">");
        skip_ws();
        if (!starts(">")) fail("expected '>'");
        ++pos_;
        return el;
      }
      if (starts("<!--")) {
        skip_until("-->");
      } else if (starts("<![CDATA[")) {
        auto e = s_.find("]]>", pos_);
        if (e == std::string_view::npos) fail("unterminated CDATA");
        el->text += std::string(s_.substr(pos_ + 9, e - pos_ - 9));
        pos_ = e + 3;
      } else if (starts("<")) {
        el->children.push_back(element());
      } else if (s_[pos_] == '&') {
        reference(el->text);
      } else {
        if (starts("]]>")) fail("']]>' in text");
        el->text += s_[pos_++];
      }
    }
  }
};

inline std::unique_ptr<Element> parse(std::string_view s) {
  return Parser(s).document();
}

}  // namespace mini_xml
