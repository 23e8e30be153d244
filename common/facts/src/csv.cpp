#include "tcbench/csv.hpp"

#include "tcbench/error.hpp"

namespace tcbench {
namespace {

[[noreturn]] void fail(std::string_view origin, std::size_t line, const std::string& what) {
  throw InvalidArgument(std::string(origin) + " line " + std::to_string(line) + ": " + what + ".");
}

}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<CsvRecord> parse_csv(std::string_view text, std::string_view origin, CsvLimits limits) {
  std::vector<CsvRecord> out;
  std::size_t line = 1, i = 0;
  // A UTF-8 byte order mark (spreadsheets write one) is not part of the first field.
  if (text.substr(0, 3) == "\xEF\xBB\xBF") i = 3;
  while (i < text.size()) {
    CsvRecord rec;
    rec.line = line;
    std::string field;
    bool quoted = false, after_quote = false, any = false;
    auto push = [&] {
      if (rec.fields.size() >= limits.max_fields)
        fail(origin, rec.line, "more than " + std::to_string(limits.max_fields) + " fields");
      rec.fields.push_back(std::move(field));
      field.clear();
      quoted = after_quote = false;
    };
    for (;; ++i) {
      if (i == text.size()) {
        if (quoted) fail(origin, rec.line, "a quoted field is never closed");
        if (any) push();
        break;
      }
      const char ch = text[i];
      if (quoted) {
        if (ch == '"') {
          if (i + 1 < text.size() && text[i + 1] == '"') {
            field.push_back('"');
            ++i;
          } else {
            quoted = false;
            after_quote = true;
          }
        } else {
          if (ch == '\n') ++line;
          field.push_back(ch);
        }
      } else if (ch == ',') {
        push();
        any = true;
        continue;
      } else if (ch == '\n' || ch == '\r') {
        if (ch == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
        ++i;
        ++line;
        if (any || !field.empty()) push();
        break;
      } else if (ch == '"' && !after_quote && trim(field).empty()) {
        field.clear();  // spaces before an opening quote are not part of the field
        quoted = true;
      } else if (after_quote) {
        if (ch != ' ' && ch != '\t') fail(origin, rec.line, "a character follows a closing quote");
      } else {
        field.push_back(ch);
      }
      any = true;
      if (field.size() > limits.max_field_bytes)
        fail(origin, rec.line,
             "a field is longer than " + std::to_string(limits.max_field_bytes) + " bytes");
    }
    bool blank = true;
    for (const std::string& f : rec.fields) blank = blank && trim(f).empty();
    if (!rec.fields.empty() && !blank) out.push_back(std::move(rec));
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out.push_back('"');
    out.push_back(ch);
  }
  out.push_back('"');
  return out;
}

}  // namespace tcbench
