// The one enum-to-name idiom: each enum that has names keeps one table of {enumerator, name}
// rows in enumerator order (checked at compile time), and name()/parse() read it. A new
// enumerator without its row fails the static_assert beside the table instead of printing "?".
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace tcbench::numerics {

template <typename E>
struct EnumName {
  E value;
  std::string_view name;
};

// True when row i names enumerator i and the last row is `last` (the enum's last enumerator).
template <typename E, std::size_t N>
constexpr bool names_every_enumerator(const EnumName<E> (&table)[N], E last) {
  for (std::size_t i = 0; i < N; ++i)
    if (static_cast<std::size_t>(table[i].value) != i) return false;
  return static_cast<std::size_t>(last) + 1 == N;
}

template <typename E, std::size_t N>
constexpr std::string_view name_in(const EnumName<E> (&table)[N], E e) {
  return table[static_cast<std::size_t>(e)].name;
}

template <typename E, std::size_t N>
constexpr std::optional<E> parse_in(const EnumName<E> (&table)[N], std::string_view s) {
  for (const EnumName<E>& row : table)
    if (row.name == s) return row.value;
  return std::nullopt;
}

}  // namespace tcbench::numerics
