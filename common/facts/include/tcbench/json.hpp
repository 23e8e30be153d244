// The little JSON tcbench's own tools write (tcbench_context, tcbench_studies, the schema): a
// quoted, escaped string and a number that is null when not finite (JSON has no inf or NaN).
#pragma once

#include <string>
#include <string_view>

namespace tcbench {

std::string json_string(std::string_view s);
std::string json_number(double v);
// A JSON value written over several lines, for nesting inside another: every line after the
// first starts with `prefix`, and the trailing newline is dropped.
std::string json_nested(std::string_view text, std::string_view prefix);

}  // namespace tcbench
