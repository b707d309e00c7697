#pragma once
// What a call costs: a price table the application loads, and the cost of a
// usage by it. Library nous_llm; docs/cost.md.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nous/llm/delta.hpp"
#include "nous/llm/result.hpp"

namespace nous::llm {

/// One model's prices in USD per million tokens.
struct ModelPrice {
    double input = 0;
    double output = 0;
    std::optional<double> cached_input;    ///< a cache read; unset: `input`
    std::optional<double> cache_write;     ///< a cache write; unset: `input`
    std::optional<double> cache_write_1h;  ///< a one-hour cache write; unset: `cache_write`
};

/// Prices by model: an exact name first, then the longest `prefix*` pattern.
class PriceTable {
  public:
    /// {"models": {"MODEL" or "PREFIX*": {"input", "output", "cached_input"?,
    /// "cache_write"?, "cache_write_1h"?}}}, prices numbers >= 0 in USD per
    /// million tokens; invalid_argument naming what is wrong otherwise.
    static Result<PriceTable> from_json(std::string_view json);

    /// Adds or replaces a model's prices (`prefix*`: a pattern). An empty
    /// name or `*` alone, or a price that is not a finite number of 0 or more
    /// (a NaN would make every cost NaN, a negative one a credit), is
    /// invalid_argument naming it, and the table is left as it was.
    [[nodiscard]] std::optional<Error> set(std::string model_or_pattern, ModelPrice price);
    /// The price of `model`: exact, else the longest matching `prefix*`; nullptr.
    const ModelPrice* find(std::string_view model) const;
    /// `usage` of `model` in USD, no rounding: (input - cached - cache_write) x
    /// input + cached x cached_input + cache writes (the one-hour ones at
    /// cache_write_1h) + output x output; nullopt when the model has no price.
    std::optional<double> cost(std::string_view model, const Usage& usage) const;

  private:
    std::map<std::string, ModelPrice, std::less<>> exact_, prefixes_;
};

}  // namespace nous::llm
