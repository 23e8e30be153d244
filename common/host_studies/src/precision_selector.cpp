#include "tcbench/studies/precision_selector.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace tcbench::studies {

namespace {

std::string percent(double x) {
  std::ostringstream os;
  os.precision(3);
  os << x * 100.0 << "%";
  return os.str();
}

void check_budget(double budget) {
  if (!(budget > 0.0) || !std::isfinite(budget))
    throw std::invalid_argument(
        "select_precisions: the error budget must be a positive finite "
        "number; got " +
        std::to_string(budget));
}

void check_layer(const LayerMeasurements& layer) {
  if (layer.options.empty())
    throw std::invalid_argument("select_precisions: layer '" + layer.layer +
                                "' has no measured options");
  for (const PrecisionOption& o : layer.options)
    if (!(o.seconds >= 0.0) || !std::isfinite(o.seconds))
      throw std::invalid_argument("select_precisions: layer '" + layer.layer + "' option " +
                                  o.label() + " has time " + std::to_string(o.seconds) +
                                  " s; times must be finite and non-negative");
}

bool eligible(const PrecisionOption& o, double budget) {
  return o.rel_error <= budget;  // false for NaN
}

// Error for ordering: NaN sorts after every number.
double error_key(const PrecisionOption& o) {
  return std::isnan(o.rel_error) ? INFINITY : o.rel_error;
}

LayerChoice choose(const LayerMeasurements& layer, double budget) {
  const auto& opts = layer.options;
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < opts.size(); ++i) {
    if (!eligible(opts[i], budget)) continue;
    // Strict comparisons keep the first listed option on a full tie.
    if (!best || opts[i].seconds < opts[*best].seconds ||
        (opts[i].seconds == opts[*best].seconds && opts[i].rel_error < opts[*best].rel_error))
      best = i;
  }
  LayerChoice c;
  c.layer = layer.layer;
  if (best) {
    c.option = *best;
    c.chosen = opts[*best];
    c.reason = "fastest of the options within " + percent(budget) + " (" +
               percent(c.chosen.rel_error) + " error).";
    return c;
  }
  std::size_t safest = 0;
  for (std::size_t i = 1; i < opts.size(); ++i) {
    const double e = error_key(opts[i]), s = error_key(opts[safest]);
    if (e < s || (e == s && opts[i].seconds < opts[safest].seconds)) safest = i;
  }
  c.option = safest;
  c.chosen = opts[safest];
  c.within_budget = false;
  c.reason = "no option is within " + percent(budget) + "; the most accurate, " + c.chosen.label() +
             ", has " + percent(c.chosen.rel_error) + " error.";
  return c;
}

}  // namespace

std::string PrecisionOption::label() const {
  std::string s(name(precision));
  if (recipe) s += "/" + std::string(name(*recipe));
  return s;
}

bool Selection::within_budget() const {
  return over_budget_count() == 0;
}

std::size_t Selection::over_budget_count() const {
  return static_cast<std::size_t>(std::count_if(
      layers.begin(), layers.end(), [](const LayerChoice& c) { return !c.within_budget; }));
}

Selection select_precisions(std::span<const LayerMeasurements> layers, double budget) {
  check_budget(budget);
  Selection sel;
  sel.budget = budget;
  for (const LayerMeasurements& layer : layers) {
    check_layer(layer);
    sel.layers.push_back(choose(layer, budget));
    sel.total_seconds += sel.layers.back().chosen.seconds;
  }
  return sel;
}

const PrecisionOption* LayerMeasurements::fastest(Precision precision,
                                                  std::optional<Fp8Recipe> recipe) const {
  const PrecisionOption* best = nullptr;
  for (const PrecisionOption& o : options) {
    if (o.precision != precision || (recipe && o.recipe != recipe)) continue;
    if (!best || o.seconds < best->seconds) best = &o;
  }
  return best;
}

Selection uniform_selection(std::span<const LayerMeasurements> layers, Precision precision,
                            std::optional<Fp8Recipe> recipe, double budget) {
  check_budget(budget);
  Selection sel;
  sel.budget = budget;
  for (const LayerMeasurements& layer : layers) {
    check_layer(layer);
    const PrecisionOption* best = layer.fastest(precision, recipe);
    if (!best)
      throw std::invalid_argument(
          "uniform_selection: layer '" + layer.layer + "' has no " + std::string(name(precision)) +
          (recipe ? "/" + std::string(name(*recipe)) : std::string()) + " measurement");
    LayerChoice c;
    c.layer = layer.layer;
    c.option = static_cast<std::size_t>(best - layer.options.data());
    c.chosen = *best;
    c.within_budget = eligible(c.chosen, budget);
    c.reason = "every layer in " + c.chosen.label() + " (" + percent(c.chosen.rel_error) +
               " error" + (c.within_budget ? "" : ", over the " + percent(budget) + " budget") +
               ").";
    sel.total_seconds += c.chosen.seconds;
    sel.layers.push_back(std::move(c));
  }
  return sel;
}

}  // namespace tcbench::studies
