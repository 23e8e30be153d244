// The little CSV tcbench reads (the model's constants, `tcbench_model predict` input): RFC 4180
// records, quoted fields with "" for a quote, LF or CRLF line ends, and limits, so a hostile or
// endless file is refused with a sentence instead of read without end.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench {

struct CsvRecord {
  std::size_t line = 0;  // 1-based line the record starts on
  std::vector<std::string> fields;
};

struct CsvLimits {
  std::size_t max_fields = 64;
  std::size_t max_field_bytes = 4096;
};

// Splits `text` into records; blank lines are skipped. Unquoted fields keep their spaces (the
// caller trims). Throws InvalidArgument naming `origin` and the line for an unterminated quote,
// a character after a closing quote, or a record past the limits.
std::vector<CsvRecord> parse_csv(std::string_view text, std::string_view origin,
                                 CsvLimits limits = {});

// `s` without leading and trailing spaces and tabs.
std::string_view trim(std::string_view s);

// A field as a CSV writer must put it: quoted when it holds a comma, quote, CR or LF.
std::string csv_field(std::string_view s);

}  // namespace tcbench
