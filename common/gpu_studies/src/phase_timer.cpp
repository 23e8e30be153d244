#include "tcbench/studies/phase_timer.hpp"

#include "tcbench/error.hpp"

#include <string>

namespace tcbench::studies {
namespace {

// Which boundary the n-th event of a step must be: begin of phase 0, end of phase 0, begin of 1..
std::string boundary(std::size_t n) {
  return std::string(n % 2 == 0 ? "begin" : "end") + " of " +
         std::string(name(kStepPhases[(n / 2) % kPhaseCount]));
}

}  // namespace

PhaseTimer::PhaseTimer(std::size_t steps) : capacity_(steps), events_(steps * kEventsPerStep) {
  if (steps == 0) throw InvalidArgument("PhaseTimer needs room for at least one step");
}

void PhaseTimer::begin(StepPhase phase, cudaStream_t stream) {
  const std::size_t n = recorded_ % kEventsPerStep;
  if (n != 2 * index(phase))
    throw Error("PhaseTimer: told the begin of " + std::string(name(phase)) + " where the " +
                boundary(n) + " was due");
  if (recorded_ == events_.size())
    throw Error("PhaseTimer: room for " + std::to_string(capacity_) + " steps only");
  events_[recorded_++].record(stream);
}

void PhaseTimer::end(StepPhase phase, cudaStream_t stream) {
  const std::size_t n = recorded_ % kEventsPerStep;
  if (n != 2 * index(phase) + 1)
    throw Error("PhaseTimer: told the end of " + std::string(name(phase)) + " where the " +
                boundary(n) + " was due");
  events_[recorded_++].record(stream);
}

std::vector<StepTimeline> PhaseTimer::timelines() const {
  if (recorded_ % kEventsPerStep != 0)
    throw Error("PhaseTimer: the last step is incomplete (" + boundary(recorded_ % kEventsPerStep) +
                " not told)");
  std::vector<StepTimeline> out;
  if (recorded_ == 0) return out;
  events_[recorded_ - 1].synchronize();
  const Event& origin = events_[0];
  const auto at = [&](std::size_t i) {
    return static_cast<double>(events_[i].elapsed_ms_since(origin)) * 1e-3;
  };
  for (std::size_t s = 0; s * kEventsPerStep < recorded_; ++s) {
    const std::size_t base = s * kEventsPerStep;
    StepTimeline t;
    for (StepPhase p : kStepPhases)
      t.phases[index(p)] = {at(base + 2 * index(p)), at(base + 2 * index(p) + 1)};
    t.step = {t.phases.front().begin, t.phases.back().end};
    out.push_back(t);
  }
  return out;
}

}  // namespace tcbench::studies
