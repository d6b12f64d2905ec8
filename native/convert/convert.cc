#include "convert/convert.h"

#include <iconv.h>
#include <strings.h>

#include <cerrno>
#include <cstring>

namespace pc {

namespace {

const char kHex[] = "0123456789abcdef";

std::string hex_of(const uint8_t* oid) {
  std::string s(40, '0');
  for (int i = 0; i < 20; i++) {
    s[2 * i] = kHex[oid[i] >> 4];
    s[2 * i + 1] = kHex[oid[i] & 15];
  }
  return s;
}

// Owns an iconv descriptor.
class Iconv {
 public:
  Iconv(const char* to, const char* from) : cd_(iconv_open(to, from)) {}
  ~Iconv() {
    if (ok()) iconv_close(cd_);
  }
  Iconv(const Iconv&) = delete;
  Iconv& operator=(const Iconv&) = delete;
  bool ok() const { return cd_ != reinterpret_cast<iconv_t>(-1); }
  iconv_t get() const { return cd_; }

 private:
  iconv_t cd_;
};

bool ieq(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

// git's same_utf_encoding(): "utf" prefixes (any case), an optional '-', the rest equal.
bool same_utf(const std::string& a, const char* b) {
  if (a.size() < 3 || strncasecmp(a.c_str(), "utf", 3) != 0 || strncasecmp(b, "utf", 3) != 0)
    return false;
  const char* x = a.c_str() + 3;
  const char* y = b + 3;
  if (*x == '-') x++;
  if (*y == '-') y++;
  return strcasecmp(x, y) == 0;
}

// git's fallback_encoding(): the official spellings of UTF-8 and Latin-1.
std::string fallback(const std::string& name) {
  if (same_utf(name, "utf-8")) return "UTF-8";
  if (ieq(name, "latin-1")) return "ISO-8859-1";
  return name;
}

const uint8_t kUtf16Be[] = {0xfe, 0xff};
const uint8_t kUtf16Le[] = {0xff, 0xfe};
const uint8_t kUtf32Be[] = {0x00, 0x00, 0xfe, 0xff};
const uint8_t kUtf32Le[] = {0xff, 0xfe, 0x00, 0x00};

bool has_prefix(const uint8_t* d, size_t len, const uint8_t* bom, size_t n) {
  return len >= n && std::memcmp(d, bom, n) == 0;
}

// git's reencode_string_len(): iconv in one pass (no final flush call, as git), with git's own
// BOM for UTF-16LE-BOM / UTF-16BE-BOM, and its fallback names when iconv refuses the first.
bool reencode(const uint8_t* in, size_t len, std::string to, std::string from,
              std::vector<uint8_t>* out) {
  const uint8_t* bom = nullptr;
  size_t bom_len = 0;
  if (same_utf(from, "UTF-16LE-BOM")) from = "UTF-16";
  if (same_utf(to, "UTF-16LE-BOM")) {
    bom = kUtf16Le;
    bom_len = 2;
    to = "UTF-16LE";
  } else if (same_utf(to, "UTF-16BE-BOM")) {
    bom = kUtf16Be;
    bom_len = 2;
    to = "UTF-16BE";
  }
  Iconv first(to.c_str(), from.c_str());
  Iconv second(first.ok() ? "" : fallback(to).c_str(), first.ok() ? "" : fallback(from).c_str());
  const Iconv& cv = first.ok() ? first : second;
  if (!cv.ok()) return false;
  out->assign(bom_len + len + 1, 0);
  if (bom_len) std::memcpy(out->data(), bom, bom_len);
  char* src = reinterpret_cast<char*>(const_cast<uint8_t*>(in));
  size_t src_left = len;
  size_t done = bom_len;
  for (;;) {
    char* dst = reinterpret_cast<char*>(out->data() + done);
    size_t dst_left = out->size() - done;
    size_t r = iconv(cv.get(), &src, &src_left, &dst, &dst_left);
    done = out->size() - dst_left;
    if (r != static_cast<size_t>(-1)) break;
    if (errno != E2BIG) return false;
    out->resize(done + 2 * src_left + 32);
  }
  out->resize(done);
  return true;
}

// git's validate_encoding(): BOM rules for the UTF encodings. Returns an error message, or "".
std::string validate_encoding(const std::string& path, const std::string& enc,
                              const uint8_t* d, size_t len) {
  if (enc.size() < 3 || strncasecmp(enc.c_str(), "utf", 3) != 0) return "";
  bool prohibited =
      ((same_utf(enc, "UTF-16BE") || same_utf(enc, "UTF-16LE")) &&
       (has_prefix(d, len, kUtf16Be, 2) || has_prefix(d, len, kUtf16Le, 2))) ||
      ((same_utf(enc, "UTF-32BE") || same_utf(enc, "UTF-32LE")) &&
       (has_prefix(d, len, kUtf32Be, 4) || has_prefix(d, len, kUtf32Le, 4)));
  if (prohibited) return "BOM is prohibited in '" + path + "' if encoded as " + enc;
  bool missing = (same_utf(enc, "UTF-16") &&
                  !(has_prefix(d, len, kUtf16Be, 2) || has_prefix(d, len, kUtf16Le, 2))) ||
                 (same_utf(enc, "UTF-32") &&
                  !(has_prefix(d, len, kUtf32Be, 4) || has_prefix(d, len, kUtf32Le, 4)));
  if (missing) return "BOM is required in '" + path + "' if encoded as " + enc;
  return "";
}

// Counts "$Id$" and "$Id: ... $" (no LF inside) keywords, as git's count_ident().
size_t count_ident(const uint8_t* p, size_t n) {
  size_t cnt = 0;
  size_t i = 0;
  while (i < n) {
    if (p[i++] != '$') continue;
    if (n - i < 3) break;
    if (p[i] != 'I' || p[i + 1] != 'd') continue;
    uint8_t ch = p[i + 2];
    i += 3;
    if (ch == '$') cnt++;
    if (ch != ':') continue;
    while (i < n) {
      uint8_t c = p[i++];
      if (c == '$') {
        cnt++;
        break;
      }
      if (c == '\n') break;
    }
  }
  return cnt;
}

// The in-memory expansion (git's ident_to_worktree): "$Id$" and git-style "$Id: ... $"
// become "$Id: <hex> $"; one with a space before its last character is someone else's.
bool ident_in_core(const uint8_t* p, size_t n, const std::string& hex, std::vector<uint8_t>* out) {
  if (count_ident(p, n) == 0) return false;
  out->clear();
  out->reserve(n + 64);
  size_t i = 0;
  const std::string rep = "Id: " + hex + " $";
  for (;;) {
    const void* d = std::memchr(p + i, '$', n - i);
    if (!d) break;
    size_t dollar = static_cast<const uint8_t*>(d) - p;
    out->insert(out->end(), p + i, p + dollar + 1);
    i = dollar + 1;
    size_t left = n - i;
    if (left < 3 || p[i] != 'I' || p[i + 1] != 'd') continue;
    if (p[i + 2] == '$') {
      i += 3;
    } else if (p[i + 2] == ':') {
      const void* e = std::memchr(p + i + 3, '$', left - 3);
      if (!e) break;
      size_t end = static_cast<const uint8_t*>(e) - p;
      if (std::memchr(p + i + 3, '\n', end - i - 3)) continue;
      // A space after "Id:x" other than right before the closing '$': a foreign id.
      if (end >= i + 4) {
        const void* s = std::memchr(p + i + 4, ' ', end - i - 4);
        if (s && static_cast<const uint8_t*>(s) - p < static_cast<ptrdiff_t>(end) - 1) continue;
      }
      i = end + 1;
    } else {
      continue;
    }
    out->insert(out->end(), rep.begin(), rep.end());
  }
  out->insert(out->end(), p + i, p + n);
  return true;
}

bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// git's is_foreign_ident() on the held text ("$Id: ...$"): whitespace not right before a '$'.
bool foreign_ident(const std::string& s) {
  if (s.compare(0, 5, "$Id: ") != 0) return false;
  for (size_t k = 5; k < s.size(); k++) {
    if (is_space(static_cast<uint8_t>(s[k])) && (k + 1 >= s.size() || s[k + 1] != '$'))
      return true;
  }
  return false;
}

// The streaming expansion (git's ident stream filter) over the whole content: a small state
// machine that holds back what might be a keyword and lets it go once decided.
bool ident_stream(const uint8_t* p, size_t n, const std::string& hex, std::vector<uint8_t>* out) {
  static const char head[] = "$Id";
  const std::string ident = ": " + hex + " $";
  constexpr int kSkipping = -2;
  out->clear();
  out->reserve(n + 64);
  std::string held;
  int state = 0;
  bool changed = false;
  auto drain = [&]() {
    out->insert(out->end(), held.begin(), held.end());
    held.clear();
    state = 0;
  };
  for (size_t i = 0; i < n; i++) {
    char ch = static_cast<char>(p[i]);
    if (state == kSkipping) {
      held.push_back(ch);
      if (ch != '\n' && ch != '$') continue;
      // A NUL ends git's held string early (it tests it as a C string).
      if (ch == '$' && !foreign_ident(std::string(held.c_str()))) {
        held.resize(3);
        held += ident;
        changed = true;
      }
      drain();
      continue;
    }
    if (state < 3 && head[state] == ch) {
      state++;
      continue;
    }
    if (state) held.append(head, static_cast<size_t>(state));
    if (state == 3) {
      if (ch != ':' && ch != '$') {
        held.push_back(ch);
        state = 0;  // held text stays held, as git's does, until something drains it
        continue;
      }
      if (ch == ':') {
        held.push_back(ch);
        state = kSkipping;
      } else {
        held += ident;
        changed = true;
        drain();
      }
      continue;
    }
    held.push_back(ch);
    drain();
  }
  if (state > 0) held.append(head, static_cast<size_t>(state));
  drain();
  return changed;
}

// LF -> CRLF for every LF not already preceded by CR.
void lf_to_crlf(const uint8_t* p, size_t n, size_t lonelf, std::vector<uint8_t>* out) {
  out->clear();
  out->reserve(n + lonelf);
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '\n' && (i == 0 || p[i - 1] != '\r')) out->push_back('\r');
    out->push_back(p[i]);
  }
}

bool is_auto(CrlfAction a) { return a == kCrlfAutoInput || a == kCrlfAutoCrlf; }

}  // namespace

TextStats gather_stats(const uint8_t* d, size_t len) {
  TextStats s;
  for (size_t i = 0; i < len; i++) {
    uint8_t c = d[i];
    if (c == '\r') {
      if (i + 1 < len && d[i + 1] == '\n') {
        s.crlf++;
        i++;
      } else {
        s.lonecr++;
      }
      continue;
    }
    if (c == '\n') {
      s.lonelf++;
      continue;
    }
    if (c == 127) {
      s.nonprintable++;
    } else if (c < 32) {
      if (c == '\b' || c == '\t' || c == 033 || c == 014) {
        s.printable++;
      } else {
        if (c == 0) s.nul++;
        s.nonprintable++;
      }
    } else {
      s.printable++;
    }
  }
  // A trailing ^Z (DOS end of file) does not count (it was counted above).
  if (len >= 1 && d[len - 1] == 032) s.nonprintable--;
  return s;
}

bool stats_are_binary(const TextStats& s) {
  return s.lonecr > 0 || s.nul > 0 || (s.printable >> 7) < s.nonprintable;
}

bool blob_has_crlf(const uint8_t* d, size_t len) {
  if (len == 0 || !std::memchr(d, '\r', len)) return false;
  TextStats s = gather_stats(d, len);
  return !stats_are_binary(s) && s.crlf > 0;
}

namespace {

// The bytes a chain of conversions works on: the input until a step changes them, then the
// step's output (each step writes into `next` and the two buffers swap).
class Stage {
 public:
  Stage(const uint8_t* data, size_t len) : cur_(data), n_(len) {}
  const uint8_t* data() const { return cur_; }
  size_t size() const { return n_; }
  bool changed() const { return changed_; }
  std::vector<uint8_t>& next() {
    next_.clear();
    return next_;
  }
  void commit() {
    buf_.swap(next_);
    cur_ = buf_.data();
    n_ = buf_.size();
    changed_ = true;
  }
  void finish(std::vector<uint8_t>* out) {
    if (cur_ == buf_.data()) out->swap(buf_);
    else out->assign(cur_, cur_ + n_);
  }

 private:
  const uint8_t* cur_;
  size_t n_;
  bool changed_ = false;
  std::vector<uint8_t> buf_, next_;
};

}  // namespace

bool to_worktree(const Conversion& c, const uint8_t* oid, const uint8_t* data, size_t len,
                 const std::string& path, std::vector<uint8_t>* out, std::string* warning) {
  Stage st(data, len);
  if (c.ident) {
    std::string hex = hex_of(oid);
    std::vector<uint8_t>& next = st.next();
    if (c.ident_in_core ? ident_in_core(st.data(), st.size(), hex, &next)
                        : ident_stream(st.data(), st.size(), hex, &next))
      st.commit();
  }
  if ((c.crlf == kCrlfTextCrlf || c.crlf == kCrlfAutoCrlf) && st.size() > 0) {
    TextStats s = gather_stats(st.data(), st.size());
    bool convert = s.lonelf > 0;
    if (convert && c.crlf == kCrlfAutoCrlf) {
      // text=auto leaves files with CRs, and binary files, as they are.
      convert = s.lonecr == 0 && s.crlf == 0 && !stats_are_binary(s);
    }
    if (convert) {
      lf_to_crlf(st.data(), st.size(), s.lonelf, &st.next());
      st.commit();
    }
  }
  if (!c.encoding.empty() && st.size() > 0) {
    if (reencode(st.data(), st.size(), c.encoding, "UTF-8", &st.next())) st.commit();
    else *warning = "failed to encode '" + path + "' from UTF-8 to " + c.encoding;
  }
  if (!st.changed()) return false;
  st.finish(out);
  return true;
}

bool to_git(const Conversion& c, const uint8_t* data, size_t len, bool index_has_crlf,
            const std::string& path, std::vector<uint8_t>* out, std::string* warning) {
  Stage st(data, len);
  if (!c.encoding.empty() && st.size() > 0) {
    std::string err = validate_encoding(path, c.encoding, st.data(), st.size());
    if (!err.empty()) *warning = err;
    else if (reencode(st.data(), st.size(), "UTF-8", c.encoding, &st.next())) st.commit();
    else *warning = "failed to encode '" + path + "' from " + c.encoding + " to UTF-8";
  }
  if (c.crlf != kCrlfBinary && st.size() > 0) {
    const uint8_t* cur = st.data();
    size_t n = st.size();
    TextStats s = gather_stats(cur, n);
    bool convert = s.crlf > 0;
    if (is_auto(c.crlf) && (stats_are_binary(s) || index_has_crlf)) convert = false;
    if (convert) {
      std::vector<uint8_t>& next = st.next();
      next.reserve(n);
      for (size_t i = 0; i < n; i++) {
        // Auto: no lone CR here (that is binary), so every CR goes; else only CR before LF.
        if (cur[i] == '\r' && (is_auto(c.crlf) || (i + 1 < n && cur[i + 1] == '\n'))) continue;
        next.push_back(cur[i]);
      }
      st.commit();
    }
  }
  if (c.ident && count_ident(st.data(), st.size()) > 0) {
    // "$Id: ... $" (no LF before the closing '$') collapses to "$Id$".
    const uint8_t* cur = st.data();
    size_t n = st.size();
    std::vector<uint8_t>& next = st.next();
    next.reserve(n);
    size_t i = 0;
    for (;;) {
      const void* d = std::memchr(cur + i, '$', n - i);
      if (!d) break;
      size_t dollar = static_cast<const uint8_t*>(d) - cur;
      next.insert(next.end(), cur + i, cur + dollar + 1);
      i = dollar + 1;
      if (n - i > 3 && std::memcmp(cur + i, "Id:", 3) == 0) {
        const void* e = std::memchr(cur + i + 3, '$', n - i - 3);
        if (!e) break;
        size_t end = static_cast<const uint8_t*>(e) - cur;
        if (std::memchr(cur + i + 3, '\n', end - i - 3)) continue;
        next.insert(next.end(), {'I', 'd', '$'});
        i = end + 1;
      }
    }
    next.insert(next.end(), cur + i, cur + n);
    st.commit();
  }
  if (!st.changed()) return false;
  st.finish(out);
  return true;
}

}  // namespace pc
