// Where a training step's time goes, measured on the GPU's own timeline: a PhaseObserver that
// records a CUDA event at every phase boundary of GpuTrainer::step (events made up front, so
// the host does no more between phases than record them) and turns them into StepTimelines for
// phase_shares() (tcbench/studies/training_step_phases.hpp).
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/studies/gpu_training.hpp"
#include "tcbench/studies/training_step_phases.hpp"

#include <cstddef>
#include <vector>

namespace tcbench::studies {

class PhaseTimer final : public PhaseObserver {
 public:
  // Room for `steps` steps; a step beyond that throws Error.
  explicit PhaseTimer(std::size_t steps);

  void begin(StepPhase phase, cudaStream_t stream) override;
  void end(StepPhase phase, cudaStream_t stream) override;

  // The steps recorded so far, in seconds since the first step began (synchronizes the last
  // event). Throws Error when a step is incomplete or a phase was told out of order.
  std::vector<StepTimeline> timelines() const;

 private:
  static constexpr std::size_t kEventsPerStep = 2 * kPhaseCount;
  std::size_t capacity_;
  std::vector<Event> events_;
  std::size_t recorded_ = 0;  // events recorded
};

}  // namespace tcbench::studies
