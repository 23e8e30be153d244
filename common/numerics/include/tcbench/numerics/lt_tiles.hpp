// cuBLASLt's tile and stage identifiers translated into shapes the efficiency model can use.
//
// A cuBLASLt algorithm reports its CTA tile as CUBLASLT_ALGO_CONFIG_TILE_ID, a value of
// cublasLtMatmulTile_t ("Tile size (in C/D matrix Rows x Cols)", cublasLt.h), and its
// shared-memory pipeline as CUBLASLT_ALGO_CONFIG_STAGES_ID (cublasLtMatmulStages_t: "size and
// number of stages in which elements are read into shared memory", i.e. BK x stages). The
// enum names carry the numbers (CUBLASLT_MATMUL_TILE_128x64 = 18); these functions turn an id
// back into them, so the alignment benchmark can feed the tile cuBLASLt actually chose into
// quantize() (gemm_time_model.hpp). The ids are plain integers here; the table is built from the
// enum constants of the cublasLt.h tcbench is compiled against, and a host test checks every value
// against the header's text.
#pragma once

#include "tcbench/numerics/gemm_time_model.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace tcbench::numerics {

// BM x BN (rows x columns of D) for a cublasLtMatmulTile_t value; nullopt for
// CUBLASLT_MATMUL_TILE_UNDEFINED (0) and for ids newer than the table.
std::optional<TimeModelTile> lt_tile_shape(std::uint32_t tile_id);
// "128x64"; "undefined" for 0; "tile_id 999" for an id the table does not know.
std::string lt_tile_label(std::uint32_t tile_id);
// How many ids the table holds (CUBLASLT_MATMUL_TILE_END - 1 for the header it was built from).
int lt_tile_count();

struct LtStages {
  int bk = 0;      // K elements read into shared memory per stage
  int stages = 0;  // pipeline depth; 0 = chosen by the kernel (CUBLASLT_MATMUL_STAGES_<bk>xAUTO)
};
// nullopt for CUBLASLT_MATMUL_STAGES_UNDEFINED (0) and unknown ids.
std::optional<LtStages> lt_stages(std::uint32_t stages_id);
// "64x3", "64xAUTO", "undefined", "stages_id 99".
std::string lt_stages_label(std::uint32_t stages_id);
int lt_stages_count();

}  // namespace tcbench::numerics
