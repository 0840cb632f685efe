//===- JsonSyntax.cpp - where a malformed JSON text goes wrong ------------===//
//
// A recursive-descent recognizer of RFC 8259 that keeps nothing: each
// function consumes one production or records the first error. Nesting is
// bounded (as simdjson's is) so that a hostile document cannot exhaust the
// stack.
//
//===----------------------------------------------------------------------===//

#include "JsonSyntax.h"

#include "llvm/ADT/StringExtras.h"

namespace rankc::dag {

namespace {

class Scanner {
public:
  explicit Scanner(llvm::StringRef text) : text(text) {}

  std::optional<JsonSyntaxError> run() {
    skipSpace();
    if (value(0)) {
      skipSpace();
      if (at < text.size())
        fail(at, "trailing content after the document (" + quote(at) + ")");
    }
    return error;
  }

private:
  llvm::StringRef text;
  size_t at = 0;
  std::optional<JsonSyntaxError> error;
  static constexpr unsigned kMaxDepth = 1024;

  bool fail(size_t offset, const std::string &message) {
    if (!error)
      error = JsonSyntaxError{offset, message};
    return false;
  }
  bool atEnd() const { return at >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[at]; }
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      ++at;
  }
  /// The token at `offset` for a message: a run of word characters, or the
  /// one character there.
  std::string quote(size_t offset) const {
    size_t end = offset;
    auto word = [](char c) {
      return llvm::isAlnum(c) || c == '.' || c == '+' || c == '-' || c == '_';
    };
    while (end < text.size() && end - offset < 24 && word(text[end]))
      ++end;
    if (end == offset)
      end = offset + 1;
    return "'" + text.slice(offset, end).str() + "'";
  }
  bool expectedAt(const std::string &what) {
    if (atEnd())
      return fail(at, "the document ends early (truncated?): expected " + what);
    return fail(at, "expected " + what + ", found " + quote(at));
  }

  bool value(unsigned depth) {
    if (depth > kMaxDepth)
      return fail(at, "the document nests deeper than 1024 levels");
    switch (peek()) {
    case '{': return object(depth);
    case '[': return array(depth);
    case '"': return string();
    case 't': return literal("true");
    case 'f': return literal("false");
    case 'n': return literal("null");
    default:
      if (peek() == '-' || llvm::isDigit(peek()))
        return number();
      return expectedAt("a value");
    }
  }

  bool literal(llvm::StringRef word) {
    if (!text.substr(at).starts_with(word) ||
        llvm::isAlnum(at + word.size() < text.size() ? text[at + word.size()]
                                                     : ' '))
      return fail(at, "expected a value, found " + quote(at));
    at += word.size();
    return true;
  }

  bool number() {
    size_t start = at;
    auto digits = [&] {
      size_t from = at;
      while (!atEnd() && llvm::isDigit(peek()))
        ++at;
      return at > from;
    };
    bool ok = true;
    if (peek() == '-')
      ++at;
    if (peek() == '0')
      ++at;
    else
      ok = digits();
    if (ok && peek() == '.') {
      ++at;
      ok = digits();
    }
    if (ok && (peek() == 'e' || peek() == 'E')) {
      ++at;
      if (peek() == '+' || peek() == '-')
        ++at;
      ok = digits();
    }
    // A number runs to a delimiter: "4.0.1", "01" and "1x" are one bad
    // number, not a number and then something else.
    char c = peek();
    if (!ok || llvm::isAlnum(c) || c == '.' || c == '+' || c == '-')
      return fail(start, "bad number " + quote(start));
    return true;
  }

  bool string() {
    size_t start = at++;
    while (!atEnd()) {
      unsigned char c = text[at];
      if (c == '"') {
        ++at;
        return true;
      }
      if (c < 0x20)
        return fail(at, c == '\n' ? "a string is not closed on its line"
                                  : "a control character inside a string");
      if (c == '\\') {
        ++at;
        char e = peek();
        if (e == 'u') {
          for (int i = 1; i <= 4; ++i)
            if (at + i >= text.size() || !llvm::isHexDigit(text[at + i]))
              return fail(at - 1, "bad \\u escape in a string");
          at += 5;
          continue;
        }
        if (!llvm::StringRef("\"\\/bfnrt").contains(e) || atEnd())
          return fail(at - 1, "bad escape in a string");
      }
      ++at;
    }
    return fail(start, "a string is not closed (the document ends inside it)");
  }

  bool object(unsigned depth) {
    ++at; // '{'
    skipSpace();
    if (peek() == '}') {
      ++at;
      return true;
    }
    while (true) {
      if (peek() != '"')
        return expectedAt("a key (a string in double quotes)");
      size_t keyStart = at;
      if (!string())
        return false;
      std::string key = text.slice(keyStart, at).str();
      skipSpace();
      if (peek() != ':')
        return expectedAt("':' after the key " + key);
      ++at;
      skipSpace();
      if (!value(depth + 1))
        return false;
      skipSpace();
      if (peek() == '}') {
        ++at;
        return true;
      }
      if (peek() != ',')
        return expectedAt("',' or '}' after a value in an object");
      ++at;
      skipSpace();
    }
  }

  bool array(unsigned depth) {
    ++at; // '['
    skipSpace();
    if (peek() == ']') {
      ++at;
      return true;
    }
    while (true) {
      if (!value(depth + 1))
        return false;
      skipSpace();
      if (peek() == ']') {
        ++at;
        return true;
      }
      if (peek() != ',')
        return expectedAt("',' or ']' after a value in a list");
      ++at;
      skipSpace();
    }
  }
};

} // namespace

std::optional<JsonSyntaxError> findJsonSyntaxError(llvm::StringRef text) {
  return Scanner(text).run();
}

} // namespace rankc::dag
