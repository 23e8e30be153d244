// What `bench_<topic> --help` (or -h) prints before Google Benchmark's own flags: what the topic
// shows, in its own words, then tcbench's flags, environment variables, exit codes and the
// concept page, so that a binary found on its own says what it is for.
#pragma once

#include <string>
#include <string_view>

namespace tcbench::bench {

struct TopicHelp {
  std::string_view shows;         // one paragraph: what the topic measures and the claim it tests
  std::string_view concept_page;  // docs/concepts/<page>.md, relative to the repository
  // The topic's own variables, one per line: "NAME=VALUE" and its meaning, two spaces apart.
  std::string_view environment = {};
};

// Defined once per benchmark binary, by its topic file, beside register_topic(). Kept short: the
// concept page holds the explanation.
TopicHelp topic_help();

// The tcbench part of --help for `program` (argv[0]; its file name is shown). Lines stay within
// 100 columns; the paragraph is wrapped.
std::string help_text(std::string_view program, const TopicHelp& topic);

}  // namespace tcbench::bench
