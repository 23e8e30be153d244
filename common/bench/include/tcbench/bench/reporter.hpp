// How a benchmark binary reports: Google Benchmark's display (console, json or csv, as
// --benchmark_format asks) and, with --benchmark_out=FILE, FILE and tcbench's row file beside it.
//
// Both files say what they hold, as nvbench's JSON does: the context carries the whole schema
// once (tcbench_schema: schema_json(), counters with unit, direction and range, precisions with
// their element formats, the name keys with their types) and every row its name's parts, typed
// (tcbench_args: {"topic": ..., "variant": ..., "precision": ..., "m": 4096, "layout": "nn"},
// BenchName::args_json()), right after its name. Every other field is Google Benchmark's own.
//
// Google Benchmark writes --benchmark_out's JSON as it goes and closes its brackets only at the
// end, so a binary stopped by a time limit (SIGTERM) or killed leaves a file no JSON parser reads,
// and every benchmark it finished is lost with it. The row file keeps them: JSON Lines, one line
// per finished benchmark written and flushed the moment Google Benchmark reports it, each line
// exactly the object Google Benchmark's own JSON reporter writes for that row:
//
//   {"context": {..., "tcbench_schema": {...}}, "tcbench_planned": [...]}  first: the run's
//                                                                       context and what it
//                                                                       will run
//   {"name": ..., "tcbench_args": {...}, "real_time": ..., ...}        one per finished row
//   {"tcbench_finished": true}                                          last, when the run ended
//
// scripts/tcbench_tools/results.py reads it when FILE is cut short, and names the planned rows
// that never ran.
#pragma once

#include "tcbench/bench/flags.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::bench {

// The row file of --benchmark_out=FILE: FILE with ".json" replaced by ".jsonl" (bench_x.json ->
// bench_x.jsonl), else FILE + ".jsonl".
std::string row_file_path(std::string_view benchmark_out);

// Runs the registered benchmarks with the display `line` asks for and, when it names
// --benchmark_out, the row file too (a row file that cannot be opened is one line on stderr and
// the run goes on without it). Returns the number of benchmarks run.
std::size_t run_benchmarks(const CommandLine& line);

// What --benchmark_list_tests --benchmark_format=json prints, without a GPU: the registered
// benchmarks as a JSON document in the result files' form, {"context": {"tcbench_schema": ...},
// "benchmarks": [{"name": ..., "tcbench_args": {...}}, ...]}, so a tool can plan by typed
// arguments instead of parsing names.
std::string listing_json();

// The JSON values of `text` (objects or arrays written one after another, separated by commas
// and white space) as compact one-line strings: white space outside strings dropped. For turning
// Google Benchmark's indented JSON into lines; public for its host test.
std::vector<std::string> split_json_values(std::string_view text);

}  // namespace tcbench::bench
