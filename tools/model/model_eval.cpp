// tcbench_model_eval: the GEMM time model (predict_time) under candidate constants, for the fit
// (tools/model/fit.py). A fitting tool, not part of tcbench: the product reads only the
// compiled-in constants.
//
//   tcbench_model_eval ROWS.csv
//
// ROWS.csv: gpu,precision,m,n,k,batch,a_k_contiguous,b_n_contiguous,c_bits (a header line, then
// one GEMM per line, as fit.py writes them). Then, on standard input, any number of constants
// sets, each a CSV text (scope,name,value,provenance) ended by a line "--end--"; for each set one
// line on standard output: the predicted microseconds of every row, space-separated ("nan" where
// the model does not cover the row), or "error: <sentence>" for a set the model refuses.
#include "tcbench/csv.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_prediction.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

using namespace tcbench;

struct Row {
  const ModelProduct* gpu;
  GemmQuery q;
};

std::int64_t integer(const std::string& s) {
  return std::stoll(std::string(trim(s)));
}

cudaDataType_t type_of_bits(std::int64_t bits) {
  switch (bits) {
    case 64:
      return CUDA_R_64F;
    case 32:
      return CUDA_R_32F;
    case 16:
      return CUDA_R_16F;
    case 8:
      return CUDA_R_8I;
    default:
      throw InvalidArgument("c_bits " + std::to_string(bits) + " is not 64, 32, 16 or 8");
  }
}

std::vector<Row> read_rows(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  const auto records = parse_csv(text.str(), path, CsvLimits{16, 256});
  std::vector<Row> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r].fields;
    if (f.size() != 9) throw InvalidArgument(path + ": a row needs 9 fields");
    Row row{find_model_product(f[0]), {}};
    const auto p = parse_precision(trim(f[1]));
    if (row.gpu == nullptr || !p) throw InvalidArgument(path + ": unknown GPU or precision");
    row.q.precision = *p;
    row.q.m = integer(f[2]);
    row.q.n = integer(f[3]);
    row.q.k = integer(f[4]);
    row.q.batch = integer(f[5]);
    row.q.a_k_contiguous = integer(f[6]) != 0;
    row.q.b_n_contiguous = integer(f[7]) != 0;
    row.q.c_type = type_of_bits(integer(f[8]));
    rows.push_back(row);
  }
  return rows;
}

// A constants set from its CSV text.
ModelConstants constants_of(const std::string& text) {
  const auto records = parse_csv(text, "the constants", CsvLimits{8, 4096});
  std::vector<ConstantRow> rows;
  for (std::size_t r = 1; r < records.size(); ++r) {
    const auto& f = records[r].fields;
    if (f.size() != 4) throw InvalidArgument("a constants row needs 4 fields");
    rows.push_back({f[0], f[1], f[2], f[3]});
  }
  return ModelConstants(rows, "the constants");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tcbench_model_eval ROWS.csv < constants sets\n");
    return 2;
  }
  try {
    const std::vector<Row> rows = read_rows(argv[1]);
    std::string line, text;
    while (std::getline(std::cin, line)) {
      if (line != "--end--") {
        text += line + "\n";
        continue;
      }
      try {
        const ModelConstants c = constants_of(text);
        std::string out;
        char buf[32];
        for (const Row& r : rows) {
          const ModelPrediction p = predict_time(r.gpu->spec, r.q, r.gpu->canonical, c);
          if (!p.not_covered.empty())
            out += "nan ";
          else {
            std::snprintf(buf, sizeof buf, "%.6g ", p.time.seconds * 1e6);
            out += buf;
          }
        }
        std::cout << out << "\n" << std::flush;
      } catch (const std::exception& e) {
        std::cout << "error: " << printable(e.what()) << "\n" << std::flush;
      }
      text.clear();
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tcbench_model_eval: %s\n", printable(e.what()).c_str());
    return 2;
  }
}
