// Exposes tcbench's narrow-format C++ (numerics/narrow_formats.hpp, block_scaling.hpp,
// block_quantize.hpp, scale_layout.hpp) to the Python tests, so that what they compare with
// ml_dtypes and with the numpy re-implementations of the specs is the C++ itself. Floats travel
// as the hex of their IEEE bits, so nothing is lost in printing.
//
//   tcbench_formats decode FMT                  every code of FMT: "code value_bits" per line
//   tcbench_formats encode FMT [rz|up]          float bits on stdin -> codes (E8M0: rounding)
//   tcbench_formats quantize G FMT ROWS COLS [ocp|round_up] [tensor_amax_bits]
//                                               ROWS*COLS float bits on stdin (K-major) -> codes,
//                                               scales (bits), scale codes, tensor scale, and the
//                                               cuBLASLt scale tensor (hex bytes)
//   tcbench_formats layout MODE OUTER INNER     MODE vec16|vec32|vec128|blk128: the offset of each
//                                               logical scale, row-major over its index space
//   tcbench_formats table                       the element table (numerics/element.hpp), one
//                                               row a line: name bits emax max min_normal
//                                               min_subnormal epsilon unit_roundoff integer
//                                               (the doubles as C99 hex floats, exact)
// FMT: e4m3 e5m2 e3m2 e2m3 e2m1 e8m0 ue4m3. G: tensor row 1x128 128x128 mx nvfp4.
// Exit codes: 0 ok, 2 usage or input error.
#include "tcbench/numerics/block_quantize.hpp"
#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/narrow_formats.hpp"
#include "tcbench/numerics/scale_layout.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace tn = tcbench::numerics;

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "tcbench_formats: %s\n", why.c_str());
  std::exit(2);
}

std::uint32_t bits_of(float f) {
  std::uint32_t u = 0;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(std::uint32_t u) {
  float f = 0;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

std::vector<float> read_floats() {
  std::vector<float> out;
  std::string word;
  while (std::cin >> word) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(word.c_str(), &end, 16);
    if (end == word.c_str() || *end != '\0' || v > 0xFFFFFFFFul)
      usage("'" + word + "' is not the hex of a 32-bit float");
    out.push_back(float_of(static_cast<std::uint32_t>(v)));
  }
  return out;
}

// A format name: an element format, or one of the two scale formats.
struct Fmt {
  std::optional<tn::ElementFormat> element;
  bool e8m0 = false, ue4m3 = false;
};
Fmt parse_format(std::string_view s) {
  Fmt f;
  if (s == "e8m0") {
    f.e8m0 = true;
  } else if (s == "ue4m3") {
    f.ue4m3 = true;
  } else {
    f.element = tn::parse_view(tn::kElementFormats, s);
    if (!f.element) usage("unknown format '" + std::string(s) + "'");
  }
  return f;
}

int decode(const Fmt& f) {
  const int codes = f.element ? tn::code_count(*f.element) : f.ue4m3 ? 128 : 256;
  for (int c = 0; c < codes; ++c) {
    const auto code = static_cast<std::uint8_t>(c);
    const float v = f.element ? tn::decode(code, *f.element)
                    : f.e8m0  ? tn::decode_e8m0(code)
                              : tn::decode_ue4m3(code);
    std::printf("%d %08x\n", c, bits_of(v));
  }
  return 0;
}

int encode(const Fmt& f, std::string_view rounding) {
  const tn::E8m0Rounding r =
      rounding == "up" ? tn::E8m0Rounding::up : tn::E8m0Rounding::toward_zero;
  for (float x : read_floats()) {
    const unsigned code = f.element ? tn::encode(x, *f.element)
                          : f.e8m0  ? tn::encode_e8m0(x, r)
                                    : tn::encode_ue4m3(x);
    std::printf("%02x\n", code);
  }
  return 0;
}

std::int64_t positive(const char* s, const char* what) {
  char* end = nullptr;
  const long long v = std::strtoll(s, &end, 10);
  if (end == s || *end != '\0' || v <= 0 || v > (1 << 20))
    usage(std::string(what) + " must be a positive integer up to 2^20, not '" + s + "'");
  return v;
}

int quantize(int argc, char** argv) {
  if (argc < 6) usage("quantize G FMT ROWS COLS [ocp|round_up] [tensor_amax_bits]");
  const auto g = tn::parse_in(tn::kGranularityNames, argv[2]);
  if (!g) usage(std::string("unknown granularity '") + argv[2] + "'");
  const Fmt f = parse_format(argv[3]);
  if (!f.element) usage("quantize needs an element format");
  const std::int64_t rows = positive(argv[4], "ROWS"), cols = positive(argv[5], "COLS");
  const tn::MxRule rule =
      argc > 6 && std::string_view(argv[6]) == "round_up" ? tn::MxRule::round_up : tn::MxRule::ocp;
  std::optional<float> amax;
  if (argc > 7) amax = float_of(static_cast<std::uint32_t>(std::strtoul(argv[7], nullptr, 16)));
  const std::vector<float> x = read_floats();
  if (static_cast<std::int64_t>(x.size()) != rows * cols)
    usage("quantize read " + std::to_string(x.size()) + " values, not " +
          std::to_string(rows * cols));
  const tn::QuantizedMatrix q = tn::quantize(x, rows, cols, *g, *f.element, rule, amax);
  std::printf("{\"codes\": [");
  for (std::size_t i = 0; i < q.codes.size(); ++i) std::printf("%s%u", i ? "," : "", q.codes[i]);
  std::printf("],\n \"scales\": [");
  for (std::size_t i = 0; i < q.scales.size(); ++i)
    std::printf("%s\"%08x\"", i ? "," : "", bits_of(q.scales[i]));
  std::printf("],\n \"scale_codes\": [");
  for (std::size_t i = 0; i < q.scale_codes.size(); ++i)
    std::printf("%s%u", i ? "," : "", q.scale_codes[i]);
  std::printf("],\n \"tensor_scale\": \"%08x\",\n \"bytes_per_element\": %.17g,\n \"cublas\": \"",
              bits_of(q.tensor_scale), q.bytes_per_element());
  if (*g != tn::Granularity::tensor)
    for (std::uint8_t b : tn::to_cublas_scales(q)) std::printf("%02x", b);
  std::printf("\"}\n");
  return 0;
}

int layout(int argc, char** argv) {
  if (argc != 5) usage("layout vec16|vec32|vec128|blk128 OUTER INNER");
  const std::string_view mode = argv[2];
  const std::int64_t outer = positive(argv[3], "OUTER"), inner = positive(argv[4], "INNER");
  if (mode == "vec16" || mode == "vec32") {
    const std::int64_t block = mode == "vec16" ? 16 : 32;
    std::printf("# elements %lld\n",
                static_cast<long long>(tn::block_scale_elements(outer, inner, block)));
    for (std::int64_t r = 0; r < outer; ++r)
      for (std::int64_t b = 0; b < tn::ceil_div(inner, block); ++b)
        std::printf("%lld\n", static_cast<long long>(tn::block_scale_offset(r, b, inner, block)));
  } else if (mode == "vec128") {
    std::printf("# elements %lld\n", static_cast<long long>(tn::vec128_elements(outer, inner)));
    for (std::int64_t r = 0; r < outer; ++r)
      for (std::int64_t b = 0; b < tn::vec128_blocks(inner); ++b)
        std::printf("%lld\n", static_cast<long long>(tn::vec128_offset(r, b, outer)));
  } else if (mode == "blk128") {
    std::printf("# elements %lld\n", static_cast<long long>(tn::blk128_elements(outer, inner)));
    for (std::int64_t p = 0; p < tn::ceil_div(outer, std::int64_t{128}); ++p)
      for (std::int64_t b = 0; b < tn::vec128_blocks(inner); ++b)
        std::printf("%lld\n", static_cast<long long>(tn::blk128_offset(p, b, inner)));
  } else {
    usage("unknown layout '" + std::string(mode) + "'");
  }
  return 0;
}

int table() {
  for (int i = 0; i < tn::kElementCount; ++i) {
    const tn::ElementInfo r = tn::element_info(static_cast<tn::Element>(i));
    std::printf("%s %d %d %a %a %a %a %a %d\n", std::string(r.name).c_str(), r.bits, r.emax, r.max,
                r.min_normal, r.min_subnormal, r.epsilon, r.unit_roundoff, r.integer ? 1 : 0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) usage("decode|encode|quantize|layout|table ...");
    const std::string_view cmd = argv[1];
    if (cmd == "decode" && argc == 3) return decode(parse_format(argv[2]));
    if (cmd == "encode" && (argc == 3 || argc == 4))
      return encode(parse_format(argv[2]), argc == 4 ? argv[3] : "rz");
    if (cmd == "quantize") return quantize(argc, argv);
    if (cmd == "layout") return layout(argc, argv);
    if (cmd == "table" && argc == 2) return table();
    usage("unknown command line; see the header of tests/tools/tcbench_formats.cpp");
  } catch (const std::exception& e) {
    usage(e.what());
  }
}
