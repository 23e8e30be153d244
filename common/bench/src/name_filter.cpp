#include "tcbench/bench/name_filter.hpp"

#include <cctype>
#include <cstdint>
#include <utility>

namespace tcbench::bench {
namespace {

using Bytes = std::bitset<256>;

// The parsed pattern: a tree of byte sets, anchors, sequences, alternatives and repetitions.
struct Node {
  enum class Kind { bytes, begin, end, sequence, alternatives, repeat } kind = Kind::sequence;
  Bytes set;
  std::vector<Node> parts;  // sequence, alternatives; repeat: exactly one
  int min = 0, max = -1;    // repeat: max -1 means unbounded
};

constexpr int kMaxDepth = 100;  // nested groups: the parser recurses once per level
constexpr int kMaxStacked = 8;  // quantifiers on one atom ("a***"): each nests the tree once

// Recursive descent over POSIX extended syntax (what std::regex::extended accepts):
//   alternatives := sequence ('|' sequence)*
//   sequence     := (atom quantifier*)*
//   atom         := '(' alternatives ')' | '[' bracket ']' | '.' | '^' | '$' | '\' special | byte
//   quantifier   := '*' | '+' | '?' | '{' m [',' [n]] '}'
class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Node parse() {
    Node n = alternatives(0);
    if (pos_ < s_.size()) fail("it has a ')' without a matching '('");
    return n;
  }
  const std::optional<std::string>& error() const { return error_; }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  std::optional<std::string> error_;

  bool done() const { return error_ || pos_ >= s_.size(); }
  void fail(std::string why) {
    if (!error_) error_ = std::move(why);
  }

  Node alternatives(int depth) {
    if (depth > kMaxDepth) {
      fail("its groups are nested more than " + std::to_string(kMaxDepth) + " deep");
      return {};
    }
    Node alt;
    alt.kind = Node::Kind::alternatives;
    alt.parts.push_back(sequence(depth));
    while (!error_ && pos_ < s_.size() && s_[pos_] == '|') {
      ++pos_;
      alt.parts.push_back(sequence(depth));
    }
    if (alt.parts.size() == 1) return std::move(alt.parts.front());
    return alt;
  }

  Node sequence(int depth) {
    Node seq;
    seq.kind = Node::Kind::sequence;
    while (!done() && s_[pos_] != '|' && s_[pos_] != ')') {
      const char c = s_[pos_];
      if (c == '*' || c == '+' || c == '?' || c == '{') {
        fail(std::string("its '") + c + "' at position " + std::to_string(pos_ + 1) +
             " has nothing before it to repeat");
        break;
      }
      Node atom_node = atom(depth);
      const bool repeatable =
          atom_node.kind != Node::Kind::begin && atom_node.kind != Node::Kind::end;
      int stacked = 0;
      while (!done() && is_quantifier(s_[pos_])) {
        if (!repeatable) {
          fail("it repeats an anchor (^ or $) at position " + std::to_string(pos_ + 1));
          break;
        }
        if (++stacked > kMaxStacked) {
          fail("it stacks more than " + std::to_string(kMaxStacked) +
               " quantifiers on one atom at position " + std::to_string(pos_ + 1));
          break;
        }
        atom_node = quantified(std::move(atom_node));
      }
      seq.parts.push_back(std::move(atom_node));
    }
    return seq;
  }

  static bool is_quantifier(char c) { return c == '*' || c == '+' || c == '?' || c == '{'; }

  Node quantified(Node inner) {
    Node rep;
    rep.kind = Node::Kind::repeat;
    const char c = s_[pos_++];
    if (c == '*') {
      rep.min = 0, rep.max = -1;
    } else if (c == '+') {
      rep.min = 1, rep.max = -1;
    } else if (c == '?') {
      rep.min = 0, rep.max = 1;
    } else {  // '{' m [',' [n]] '}'
      const std::size_t start = pos_ - 1;
      const auto number = [&]() -> std::optional<int> {
        if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
          return std::nullopt;
        long v = 0;
        while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
          v = v * 10 + (s_[pos_++] - '0');
          if (v > NameFilter::kMaxCount) v = NameFilter::kMaxCount + 1;  // saturate: said below
        }
        return static_cast<int>(v);
      };
      const auto m = number();
      std::optional<int> n = m;
      bool unbounded = false;
      if (m && pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        n = number();
        unbounded = !n;
      }
      if (!m || pos_ >= s_.size() || s_[pos_] != '}') {
        fail("its '{' at position " + std::to_string(start + 1) +
             " does not start a repetition count {m}, {m,} or {m,n}");
        return inner;
      }
      ++pos_;
      if (*m > NameFilter::kMaxCount || (n && *n > NameFilter::kMaxCount)) {
        fail("it repeats something more than " + std::to_string(NameFilter::kMaxCount) + " times");
        return inner;
      }
      if (n && *n < *m) {
        fail("its repetition count at position " + std::to_string(start + 1) +
             " has a maximum below its minimum");
        return inner;
      }
      rep.min = *m;
      rep.max = unbounded ? -1 : *n;
    }
    rep.parts.push_back(std::move(inner));
    return rep;
  }

  static Node bytes(Bytes set) {
    Node n;
    n.kind = Node::Kind::bytes;
    n.set = set;
    return n;
  }

  Node atom(int depth) {
    const char c = s_[pos_++];
    switch (c) {
      case '(': {
        Node inner = alternatives(depth + 1);
        if (!error_ && (pos_ >= s_.size() || s_[pos_] != ')')) fail("it has an unclosed '('");
        ++pos_;
        return inner;
      }
      case '[':
        return bytes(bracket());
      case '.': {
        Bytes any;
        any.set();
        any.reset(0);  // std::regex's POSIX '.' matches any character but NUL
        return bytes(any);
      }
      case '^': {
        Node n;
        n.kind = Node::Kind::begin;
        return n;
      }
      case '$': {
        Node n;
        n.kind = Node::Kind::end;
        return n;
      }
      case '\\': {
        if (pos_ >= s_.size()) {
          fail("it ends in a lone backslash");
          return {};
        }
        const char e = s_[pos_++];
        // std::regex::extended's escapable characters (a ']' or '}' needs no escape).
        static constexpr std::string_view kSpecial = ".[()*+?{|^$\\";
        if (kSpecial.find(e) == std::string_view::npos) {
          fail(std::string("its escape \\") + e +
               " is not POSIX extended syntax (escape only one of .[()*+?{|^$\\; write [0-9] "
               "for a digit)");
          return {};
        }
        Bytes one;
        one.set(static_cast<unsigned char>(e));
        return bytes(one);
      }
      default: {
        Bytes one;
        one.set(static_cast<unsigned char>(c));
        return bytes(one);
      }
    }
  }

  // A named class [:name:] inside a bracket expression.
  std::optional<Bytes> named_class(std::string_view name) {
    int (*test)(int) = nullptr;
    static constexpr std::pair<std::string_view, int (*)(int)> kClasses[] = {
        {"alnum", std::isalnum}, {"alpha", std::isalpha}, {"blank", std::isblank},
        {"cntrl", std::iscntrl}, {"digit", std::isdigit}, {"graph", std::isgraph},
        {"lower", std::islower}, {"print", std::isprint}, {"punct", std::ispunct},
        {"space", std::isspace}, {"upper", std::isupper}, {"xdigit", std::isxdigit}};
    for (const auto& [n, t] : kClasses)
      if (n == name) test = t;
    if (test == nullptr) return std::nullopt;
    Bytes out;
    for (int b = 0; b < 128; ++b)  // the "C" locale's classes: ASCII
      if (test(b)) out.set(static_cast<std::size_t>(b));
    return out;
  }

  // One bracket endpoint: a byte, or a collating element [.c.] / equivalence class [=c=] of one
  // character.
  std::optional<unsigned char> endpoint() {
    if (pos_ + 1 < s_.size() && s_[pos_] == '[' && (s_[pos_ + 1] == '.' || s_[pos_ + 1] == '=')) {
      const char kind = s_[pos_ + 1];
      const std::size_t close = s_.find(std::string{kind, ']'}, pos_ + 2);
      if (close == std::string_view::npos || close != pos_ + 3) {
        fail(std::string("its [") + kind + " at position " + std::to_string(pos_ + 1) +
             " is not a one-character [" + kind + "c" + kind + "]");
        return std::nullopt;
      }
      const unsigned char c = static_cast<unsigned char>(s_[pos_ + 2]);
      pos_ = close + 2;
      return c;
    }
    return static_cast<unsigned char>(s_[pos_++]);
  }

  Bytes bracket() {
    const std::size_t open = pos_ - 1;
    Bytes set;
    bool negate = false;
    if (pos_ < s_.size() && s_[pos_] == '^') {
      negate = true;
      ++pos_;
    }
    bool first = true;
    while (!error_) {
      if (pos_ >= s_.size()) {
        fail("its '[' at position " + std::to_string(open + 1) + " is never closed by ']'");
        break;
      }
      const char c = s_[pos_];
      if (c == ']' && !first) {
        ++pos_;
        break;
      }
      first = false;
      if (c == '[' && pos_ + 1 < s_.size() && s_[pos_ + 1] == ':') {
        const std::size_t close = s_.find(":]", pos_ + 2);
        if (close == std::string_view::npos) {
          fail("its [: at position " + std::to_string(pos_ + 1) + " is never closed by :]");
          break;
        }
        const std::string_view name = s_.substr(pos_ + 2, close - pos_ - 2);
        const auto cls = named_class(name);
        if (!cls) {
          fail("[:" + std::string(name) +
               ":] is not a character class (alnum, alpha, blank, "
               "cntrl, digit, graph, lower, print, punct, space, upper, xdigit)");
          break;
        }
        set |= *cls;
        pos_ = close + 2;
        continue;
      }
      const auto low = endpoint();
      if (!low) break;
      // A range a-z; a '-' first, last or right after a range is a literal.
      if (pos_ + 1 < s_.size() && s_[pos_] == '-' && s_[pos_ + 1] != ']') {
        ++pos_;
        const auto high = endpoint();
        if (!high) break;
        if (*high < *low) {
          fail("its range at position " + std::to_string(pos_) + " ends below its start");
          break;
        }
        for (int b = *low; b <= *high; ++b) set.set(static_cast<std::size_t>(b));
      } else {
        set.set(*low);
      }
    }
    if (negate) {
      set.flip();
      set.reset(0);
    }
    return set;
  }
};

// Node -> instructions (Thompson's construction).
class Compiler {
 public:
  explicit Compiler(std::vector<NameFilter::Instruction>& out) : out_(out) {}

  bool emit(const Node& n) {
    using Op = NameFilter::Instruction::Op;
    if (out_.size() > NameFilter::kMaxStates) return false;
    switch (n.kind) {
      case Node::Kind::bytes:
        push({Op::byte_set, n.set, size() + 1, -1});
        return true;
      case Node::Kind::begin:
        push({Op::line_begin, {}, size() + 1, -1});
        return true;
      case Node::Kind::end:
        push({Op::line_end, {}, size() + 1, -1});
        return true;
      case Node::Kind::sequence:
        for (const Node& p : n.parts)
          if (!emit(p)) return false;
        return true;
      case Node::Kind::alternatives: {
        // split L1 L2; L1: a; jump end; L2: split ... ; last: z; end:
        std::vector<int> jumps;
        for (std::size_t i = 0; i < n.parts.size(); ++i) {
          const bool last = i + 1 == n.parts.size();
          const int split = last ? -1 : push({Op::split, {}, size() + 1, -1});
          if (!emit(n.parts[i])) return false;
          if (!last) {
            jumps.push_back(push({Op::jump, {}, -1, -1}));
            out_[static_cast<std::size_t>(split)].alternative = size();
          }
        }
        for (int j : jumps) out_[static_cast<std::size_t>(j)].next = size();
        return true;
      }
      case Node::Kind::repeat: {
        const Node& body = n.parts.front();
        for (int i = 0; i < n.min; ++i)
          if (!emit(body)) return false;
        if (n.max < 0) {  // L: split body, out; body; jump L
          const int loop = push({Op::split, {}, size() + 1, -1});
          if (!emit(body)) return false;
          push({Op::jump, {}, loop, -1});
          out_[static_cast<std::size_t>(loop)].alternative = size();
          return true;
        }
        std::vector<int> splits;  // (split body, end; body) x (max - min)
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(push({Op::split, {}, size() + 1, -1}));
          if (!emit(body)) return false;
        }
        for (int s : splits) out_[static_cast<std::size_t>(s)].alternative = size();
        return true;
      }
    }
    return false;
  }

 private:
  std::vector<NameFilter::Instruction>& out_;
  int size() const { return static_cast<int>(out_.size()); }
  int push(NameFilter::Instruction i) {
    out_.push_back(i);
    return size() - 1;
  }
};

}  // namespace

std::variant<NameFilter, std::string> NameFilter::parse(std::string_view spec) {
  NameFilter f;
  f.spec_ = std::string(spec);
  if (spec.empty() || spec == "all") return f;  // Google Benchmark's "everything"
  std::string_view pattern = spec;
  if (pattern.front() == '-') {  // Google Benchmark's negative filter ("-" alone: nothing)
    f.negate_ = true;
    pattern.remove_prefix(1);
  }
  Parser parser(pattern);
  const Node tree = parser.parse();
  if (parser.error()) return *parser.error();
  Compiler compiler(f.program_);
  if (!compiler.emit(tree) || f.program_.size() > kMaxStates)
    return "it expands to more than " + std::to_string(kMaxStates) +
           " automaton states (repetition counts multiply: write a shorter pattern)";
  f.program_.push_back({Instruction::Op::match, {}, -1, -1});
  return f;
}

bool NameFilter::matches(std::string_view name) const {
  if (program_.empty()) return !negate_;
  using Op = Instruction::Op;
  const std::size_t states = program_.size();
  // Pike's simulation without captures: the set of live states at each position, each added
  // once per position (mark), so the cost is O(states) per byte whatever the pattern.
  std::vector<int> current, next, stack;
  std::vector<std::size_t> mark(states, SIZE_MAX);
  current.reserve(states);
  next.reserve(states);
  bool found = false;
  const auto add = [&](std::vector<int>& list, int start, std::size_t at) {
    stack.push_back(start);
    while (!stack.empty() && !found) {
      const int pc = stack.back();
      stack.pop_back();
      auto& m = mark[static_cast<std::size_t>(pc)];
      if (m == at) continue;
      m = at;
      const Instruction& in = program_[static_cast<std::size_t>(pc)];
      switch (in.op) {
        case Op::match:
          found = true;
          break;
        case Op::jump:
          stack.push_back(in.next);
          break;
        case Op::split:
          stack.push_back(in.alternative);
          stack.push_back(in.next);
          break;
        case Op::line_begin:
          if (at == 0) stack.push_back(in.next);
          break;
        case Op::line_end:
          if (at == name.size()) stack.push_back(in.next);
          break;
        case Op::byte_set:
          list.push_back(pc);
          break;
      }
    }
    stack.clear();
  };
  for (std::size_t at = 0; !found; ++at) {
    add(current, 0, at);  // a match may start at every position (a search, not a full match)
    if (found || at == name.size()) break;
    const auto byte = static_cast<unsigned char>(name[at]);
    for (int pc : current) {
      const Instruction& in = program_[static_cast<std::size_t>(pc)];
      if (in.bytes.test(byte)) add(next, in.next, at + 1);
      if (found) break;
    }
    current.swap(next);
    next.clear();
  }
  return found != negate_;
}

}  // namespace tcbench::bench
