// block_scaling: how fine must an FP8/FP4 scale be, and what does each granularity cost? The
// cuBLASLt GEMM of every scale mode (tcbench/scale_modes.hpp) on the same TN problem:
//
//   gemm_<mode>/<precision>/m:../n:../k:../layout:tn
//     tensor/fp8     per-tensor FP8 (current scaling), the baseline           Ada, Hopper,
//     Blackwell rowwise/fp8    one FP32 scale per row of A and column of B (OUTER_VEC)  Hopper
//     (9.0) 1x128/fp8      one FP32 scale per 1x128 tile of A and B (VEC128)        Hopper (9.0)
//     128x128/fp8    A per 128x128 block, B per 1x128 tile (DeepSeek-V3)      Hopper (9.0)
//     mx/fp8         MXFP8: E4M3, E8M0 per 32 (VEC32_UE8M0)                   Blackwell (10.0+)
//     nvfp4/fp4      NVFP4: E2M1, UE4M3 per 16, FP32 per tensor (VEC16_UE4M3) Blackwell (10.0+)
//     mx/fp4, mx/fp6 MXFP4, MXFP6: listed so that their skip says cuBLASLt has no such GEMM
//   A mode the GPU or cuBLASLt lacks is a skip with the documented rule (GemmSpec::why_invalid).
//
//   quantize_<granularity>/<precision>/m:ROWS/k:COLS: what making the block scales costs, the
//   kernels of kernels/block_quant.cu on one K-major FP32 operand (the activations below, ROWS
//   rows of COLS along K): per-block amax, scale, cast, scales written in cuBLASLt's layout.
//     1x128/fp8 (VEC128_32F), 128x128/fp8 (BLK128x128_32F), mx/fp8 (E8M0, VEC32_UE8M0),
//     nvfp4/fp4 (E2M1 packed, UE4M3, VEC16_UE4M3, after a tensor amax pass)
//   They run on every GPU (portable conversions); each is checked byte for byte (codes, the
//   whole scale tensor, NVFP4's tensor scale) against numerics::quantize() before it is timed.
//   Counters: gbps (the FP32 input read once plus codes and scales written: block_quant.hpp's
//   block_quant_bytes_moved; NVFP4's second read for the tensor amax is in its time, not its
//   bytes) and pct_of_peak (of the DRAM bandwidth).
//
// A (weights) and B (activations, with outlier channels 100x the rest along K) start as FP32
// originals and are quantized on the host with numerics/block_quantize.hpp, the rules the host
// tests check against their specs; the scale tensors go to the GPU in cuBLASLt's layout.
// Counters: tflops, pct_of_peak (the precision's dense peak), rel_error (vs the dequantized
// operands: the GEMM's own error; a scale read from the wrong place fails it),
// rel_error_unquantized (vs the FP32 originals: what a user gets), speedup_vs_bf16 and
// speedup_vs_fp8 (per-tensor FP8; same TN problem), bytes_per_element (A and B, scales included).
// See docs/concepts/fp8-scaling.md, "Block scaling".
//
//   build/release/bin/bench_block_scaling --quick
//   build/release/bin/bench_block_scaling
//   --benchmark_filter='block_scaling/gemm_(tensor|rowwise|1x128|128x128)/fp8/'
#include "tcbench/bench/harness.hpp"
#include "tcbench/kernels/block_quant.hpp"
#include "tcbench/numerics/block_quantize.hpp"
#include "tcbench/scale_modes.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

namespace tn = tcbench::numerics;
namespace tk = tcbench::kernels;

constexpr std::string_view kTopic = "block_scaling";
constexpr float kOutlierScale = 100.0f;
constexpr std::int64_t kOutlierEvery = 512;  // one outlier channel per 512 along K

struct Variant {
  Precision precision;
  ScaleMode mode;
};
constexpr Variant kVariants[] = {
    {Precision::fp8, ScaleMode::tensor},     {Precision::fp8, ScaleMode::rowwise},
    {Precision::fp8, ScaleMode::tile_1x128}, {Precision::fp8, ScaleMode::block_128x128},
    {Precision::fp8, ScaleMode::mx},         {Precision::fp4, ScaleMode::nvfp4},
    {Precision::fp4, ScaleMode::mx},         {Precision::fp6, ScaleMode::mx},
};

// The block element format of precision p: its A type's row.
tn::ElementFormat element_of(Precision p) {
  return *tn::view_of(tn::kElementFormats, tcbench::element_of(info(p).a));
}

GemmCase make_case(const Variant& v, const GemmShape& s) {
  GemmCase c;
  c.precision = v.precision;
  c.spec = GemmSpec::for_scaling(v.precision, v.mode, s.m, s.n, s.k);
  c.speedup_vs = {Precision::bf16, Precision::fp8};
  return c;
}

// The originals are the same on every machine and run (numerics/random.hpp): uniform(-1, 1)
// sums of three, near-normal, bounded, cheap.
std::vector<float> normal_operand(std::int64_t rows, std::int64_t cols, std::uint64_t seed,
                                  bool outlier_channels) {
  tn::RandomStream rng(seed);
  std::vector<float> x(checked_elements(rows, cols));
  for (float& v : x) {
    v = 0.0f;
    for (int i = 0; i < 3; ++i) v += rng.uniform(-1.0f, 1.0f);
  }
  if (outlier_channels)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 37; c < cols; c += kOutlierEvery)
        x[static_cast<std::size_t>(r * cols + c)] *= kOutlierScale;
  return x;
}

// The values a block-scaled GEMM multiplies: element x its block scale, before alpha (NVFP4's
// tensor scales are alpha's).
std::vector<float> gemm_values(const tn::QuantizedMatrix& q) {
  if (q.granularity != tn::Granularity::nvfp4) return q.dequantized();
  std::vector<float> out(q.codes.size());
  const std::int64_t nb = q.blocks();
  for (std::int64_t r = 0; r < q.rows; ++r)
    for (std::int64_t c = 0; c < q.cols; ++c)
      out[static_cast<std::size_t>(r * q.cols + c)] =
          tn::decode(q.codes[static_cast<std::size_t>(r * q.cols + c)], tn::ElementFormat::e2m1) *
          tn::decode_ue4m3(q.scale_codes[static_cast<std::size_t>(r * nb + c / tn::kNvfp4Block)]);
  return out;
}

template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host, cudaStream_t s) {
  DeviceBuffer<T> d(host.size());
  d.upload(host, s);
  return d;
}

// The FP32 originals of one shape: A (weights) and B (activations, with outlier channels),
// shared by every scale mode of that shape.
struct Originals {
  std::vector<float> a, b;
};
const Originals& originals(const GemmShape& s) {
  const std::string key = "block_scaling_originals|" + std::to_string(s.m) + "x" +
                          std::to_string(s.n) + "x" + std::to_string(s.k);
  return latest<Originals>(key, [&] {
    return Originals{normal_operand(s.m, s.k, 0xB10C0A, false),
                     normal_operand(s.n, s.k, 0xB10C0B, true)};
  });
}

// What one configuration makes on the host (seconds at 8192^2: quantizing, packing, the values
// the GEMM multiplies), made once for all of Google Benchmark's calls of its body.
struct HostOperands {
  tn::QuantizedMatrix a, b;
  std::vector<std::uint8_t> a_codes, b_codes;    // as stored (FP4 packed)
  std::vector<std::uint8_t> a_scales, b_scales;  // cuBLASLt's layout (block modes)
  std::vector<float> a_ref, b_ref;               // gemm_values (block modes)
};
const HostOperands& host_operands(const Variant& v, const GemmShape& s, const Originals& x) {
  const std::string key = "block_scaling_operands|" + std::string(tcbench::name(v.mode)) + "|" +
                          std::string(name(v.precision)) + "|" + std::to_string(s.m) + "x" +
                          std::to_string(s.n) + "x" + std::to_string(s.k);
  return latest<HostOperands>(key, [&] {
    const tn::ElementFormat f = element_of(v.precision);
    const ScaleModeInfo& mode = info(v.mode);
    HostOperands h;
    // TN: A is stored k x m (row i of op(A) is K-contiguous), B k x n: both K-major operands.
    h.a = tn::quantize(x.a, s.m, s.k, mode.a, f);
    h.b = tn::quantize(x.b, s.n, s.k, mode.b, f);
    h.a_codes = v.precision == Precision::fp4 ? tn::pack_fp4(h.a.codes) : h.a.codes;
    h.b_codes = v.precision == Precision::fp4 ? tn::pack_fp4(h.b.codes) : h.b.codes;
    if (v.mode != ScaleMode::tensor) {
      h.a_scales = tn::to_cublas_scales(h.a);
      h.b_scales = tn::to_cublas_scales(h.b);
      h.a_ref = gemm_values(h.a);
      h.b_ref = gemm_values(h.b);
    }
    return h;
  });
}

// Everything one configuration keeps on the device while it is measured.
struct DeviceOperands {
  DeviceBuffer<std::uint8_t> a_scales, b_scales;
  DeviceBuffer<float> a_ref, b_ref, a32, b32;
};

void run_block_gemm(benchmark::State& state, const Env& env, const Variant& v, const GemmShape& s) {
  GemmCase c = make_case(v, s);
  {  // The documented rules first (types, architecture, layout), before any work: stand-in
     // pointers, aligned and non-null, for the scale tensors that do not exist yet.
    GemmSpec check = c.spec;
    alignas(16) static const unsigned char kStandIn[16] = {};
    check.a_scale = check.b_scale = kStandIn;
    env.skip_unless_valid(check);
  }
  const ScaleModeInfo& mode = info(v.mode);
  const std::size_t a_n = checked_elements(s.m, s.k), b_n = checked_elements(s.n, s.k);
  require_memory(env, (a_n + b_n) * (2 * sizeof(float) + 2) + (std::size_t{64} << 20),
                 "the operands of a " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                     std::to_string(s.k) + " block-scaled GEMM");
  const cudaStream_t st = env.stream();
  const Originals& x = originals(s);
  const HostOperands& h = host_operands(v, s, x);
  DeviceOperands o;
  o.a32 = upload(x.a, st);
  o.b32 = upload(x.b, st);
  if (v.mode == ScaleMode::tensor) {
    c.a_scale = h.a.scales[0];  // the harness puts them on the device and verifies with them
    c.b_scale = h.b.scales[0];
  } else {
    o.a_scales = upload(h.a_scales, st);
    o.b_scales = upload(h.b_scales, st);
    const auto scale_bytes = static_cast<std::int64_t>(data_type_bytes(mode.scale_type));
    c.spec.a_scale = o.a_scales.get();
    c.spec.b_scale = o.b_scales.get();
    c.spec.a_scale_count = static_cast<std::int64_t>(o.a_scales.size()) / scale_bytes;
    c.spec.b_scale_count = static_cast<std::int64_t>(o.b_scales.size()) / scale_bytes;
    o.a_ref = upload(h.a_ref, st);
    o.b_ref = upload(h.b_ref, st);
    c.reference = GemmCase::ReferenceOperands{o.a_ref.get(), o.b_ref.get()};
    if (v.mode == ScaleMode::nvfp4)
      c.alpha = 1.0 / (static_cast<double>(h.a.tensor_scale) * h.b.tensor_scale);
  }
  c.prepare = [&h](cudaStream_t stream, const GemmOperands& ops) {
    TCB_CUDA(
        cudaMemcpyAsync(ops.a, h.a_codes.data(), h.a_codes.size(), cudaMemcpyHostToDevice, stream));
    TCB_CUDA(
        cudaMemcpyAsync(ops.b, h.b_codes.data(), h.b_codes.size(), cudaMemcpyHostToDevice, stream));
  };
  c.extra_reference = GemmCase::ExtraReference{o.a32.get(), o.b32.get()};
  c.extra_reference->alpha_dequantizes = v.mode == ScaleMode::nvfp4;
  run_cublaslt_gemm(state, env, c);
  const double elements = static_cast<double>(a_n + b_n);
  set_counter(state, counters::bytes_per_element,
              (h.a.bytes_per_element() * static_cast<double>(a_n) +
               h.b.bytes_per_element() * static_cast<double>(b_n)) /
                  elements);
}

// Quantization kernels ------------------------------------------------------------------------

struct QuantVariant {
  Precision precision;
  tn::Granularity granularity;
};
constexpr QuantVariant kQuantVariants[] = {
    {Precision::fp8, tn::Granularity::tile_1x128},
    {Precision::fp8, tn::Granularity::block_128x128},
    {Precision::fp8, tn::Granularity::mx},
    {Precision::fp4, tn::Granularity::nvfp4},
};

// The first differing byte, as a sentence; nullopt when the two are equal.
std::optional<std::string> first_difference(const char* what, const std::vector<std::uint8_t>& dev,
                                            const std::vector<std::uint8_t>& host) {
  if (dev.size() != host.size())
    return std::string(what) + " bytes: " + std::to_string(dev.size()) + ", the host's " +
           std::to_string(host.size());
  for (std::size_t i = 0; i < host.size(); ++i)
    if (dev[i] != host[i])
      return std::string(what) + " byte " + std::to_string(i) + " is " + std::to_string(dev[i]) +
             ", the host's " + std::to_string(host[i]);
  return std::nullopt;
}

void run_quantize(benchmark::State& state, const Env& env, const std::string& key,
                  const QuantVariant& v, std::int64_t rows, std::int64_t cols) {
  const tn::Granularity g = v.granularity;
  const tn::ElementFormat f = element_of(v.precision);
  const std::size_t n = checked_elements(rows, cols);
  const std::size_t code_bytes = tk::block_quant_code_bytes(g, rows, cols);
  const std::size_t scale_bytes = tk::block_quant_scale_bytes(g, rows, cols);
  require_memory(env, n * sizeof(float) + code_bytes + scale_bytes + (std::size_t{64} << 20),
                 "a " + std::to_string(rows) + " x " + std::to_string(cols) + " operand and its " +
                     std::string(tn::name(g)) + " quantization");
  const cudaStream_t st = env.stream();
  // The activations of the GEMM of that size (the same host operand, made once per shape).
  const std::vector<float>& x = originals(GemmShape{cols, rows, cols}).b;
  const DeviceBuffer<float> dx = upload(x, st);
  DeviceBuffer<std::uint8_t> codes(code_bytes), scales(scale_bytes);
  DeviceValue<float> tensor_scale;
  DeviceValue<unsigned> amax;
  const tk::BlockQuantOutput out{codes.get(), scales.get(), tensor_scale.ptr(), amax.ptr()};
  KernelCase k;
  k.bytes_moved = tk::block_quant_bytes_moved(g, rows, cols);
  k.reset = [&](cudaStream_t s) {  // poison: a byte the kernel skips cannot equal the host's
    TCB_CUDA(cudaMemsetAsync(codes.get(), 0xA5, codes.bytes(), s));
    TCB_CUDA(cudaMemsetAsync(scales.get(), 0xA5, scales.bytes(), s));
    tensor_scale.set(NAN, s);
  };
  k.work = [&](cudaStream_t s) {
    tk::block_quantize(dx.get(), rows, cols, g, f, tn::MxRule::ocp, out, s);
  };
  k.check = [&](cudaStream_t s) -> std::optional<std::string> {
    const tn::QuantizedMatrix q = tn::quantize(x, rows, cols, g, f);
    if (auto wrong =
            first_difference("code", codes.download(s),
                             g == tn::Granularity::nvfp4 ? tn::pack_fp4(q.codes) : q.codes))
      return wrong;
    if (auto wrong = first_difference("scale tensor", scales.download(s), tn::to_cublas_scales(q)))
      return wrong;
    if (g == tn::Granularity::nvfp4) {
      const float got = tensor_scale.get(s);
      if (std::memcmp(&got, &q.tensor_scale, sizeof got) != 0)
        return "the tensor scale is " + std::to_string(got) + ", the host's " +
               std::to_string(q.tensor_scale);
    }
    return std::nullopt;
  };
  run_kernel(state, env, key, k);
}

}  // namespace

TopicHelp topic_help() {
  return {
      "How fine an FP8 or FP4 scale must be and what each granularity costs: the cuBLASLt "
      "GEMM of one TN problem in every scale mode the GPU and cuBLASLt accept (per tensor, "
      "per row, 1x128 tiles and 128x128 blocks on Hopper; MXFP8 and NVFP4 on Blackwell) "
      "beside BF16, with errors against the dequantized operands and the FP32 originals.",
      "docs/concepts/fp8-scaling.md"};
}

void register_topic(const Env& env) {
  const std::vector<std::int64_t> sizes =
      env.quick() ? std::vector<std::int64_t>{8192} : std::vector<std::int64_t>{4096, 8192, 16384};
  for (std::int64_t n : sizes) {
    const GemmShape s{n, n, n};
    // The 16-bit and per-tensor baselines beside, named as their own rows.
    const std::string bf16 =
        BenchName(kTopic, "gemm", Precision::bf16)
            .gemm(baseline_case(make_case(kVariants[0], s), Precision::bf16).spec.problem);
    register_gpu_benchmark(bf16, [&env, s](benchmark::State& st) {
      run_cublaslt_gemm(st, env, baseline_case(make_case(kVariants[0], s), Precision::bf16));
    });
    for (const Variant& v : kVariants) {
      const std::string name =
          BenchName(kTopic, "gemm_" + std::string(tcbench::name(v.mode)), v.precision)
              .gemm(make_case(v, s).spec.problem);
      register_gpu_benchmark(name,
                             [&env, v, s](benchmark::State& st) { run_block_gemm(st, env, v, s); });
    }
    // The same operand size quantized: the activations (B) of that GEMM.
    for (const QuantVariant& v : kQuantVariants) {
      const std::string name =
          BenchName(kTopic, "quantize_" + std::string(tn::name(v.granularity)), v.precision)
              .arg(Key::m, n)
              .arg(Key::k, n);
      register_gpu_benchmark(
          name, [&env, name, v, n](benchmark::State& st) { run_quantize(st, env, name, v, n, n); });
    }
  }
}

}  // namespace tcbench::bench
