// The price table and a usage's cost (nous/llm/cost.hpp).

#include <rapidjson/document.h>

#include <algorithm>
#include <cmath>

#include "nous/http/json.hpp"
#include "nous/llm/cost.hpp"

namespace nous::llm {

namespace {

Error invalid(std::string message) {
    return Error(nous::http::ErrorCode::invalid_argument, "price table: " + std::move(message));
}

bool usable_price(double usd) { return std::isfinite(usd) && usd >= 0; }

Error not_a_price(const std::string& model, std::string_view key) {
    return invalid("'" + model + "': " + std::string(key) +
                   " must be a number of USD per million tokens, 0 or more");
}

}  // namespace

Result<PriceTable> PriceTable::from_json(std::string_view json) {
    auto doc = nous::http::parse_json(json);
    if (!doc) return invalid("not JSON (" + doc.error().message + ")");
    const rapidjson::Value& root = *doc.value();
    if (!root.IsObject() || !root.HasMember("models") || !root["models"].IsObject())
        return invalid("{\"models\": {...}} expected");
    PriceTable table;
    for (const auto& m : root["models"].GetObject()) {
        const std::string model(m.name.GetString(), m.name.GetStringLength());
        if (!m.value.IsObject()) return invalid("'" + model + "': an object of prices expected");
        ModelPrice price;
        std::optional<double>* optional[] = {&price.cached_input, &price.cache_write,
                                             &price.cache_write_1h};
        const char* optional_names[] = {"cached_input", "cache_write", "cache_write_1h"};
        for (const auto& p : m.value.GetObject()) {
            const std::string_view key(p.name.GetString(), p.name.GetStringLength());
            if (!p.value.IsNumber() || !usable_price(p.value.GetDouble()))
                return not_a_price(model, key);
            const double usd = p.value.GetDouble();
            if (key == "input") {
                price.input = usd;
            } else if (key == "output") {
                price.output = usd;
            } else {
                const auto at =
                    std::find(std::begin(optional_names), std::end(optional_names), key);
                if (at == std::end(optional_names))
                    return invalid("'" + model + "': unknown price '" + std::string(key) +
                                   "' (input, output, cached_input, cache_write, cache_write_1h)");
                *optional[at - std::begin(optional_names)] = usd;
            }
        }
        if (!m.value.HasMember("input") || !m.value.HasMember("output"))
            return invalid("'" + model + "': input and output prices are required");
        if (auto bad = table.set(model, price)) return *bad;
    }
    return table;
}

std::optional<Error> PriceTable::set(std::string model_or_pattern, ModelPrice price) {
    if (model_or_pattern.empty() || model_or_pattern == "*")
        return invalid("an empty model name or pattern");
    const std::pair<const char*, std::optional<double>> prices[] = {
        {"input", price.input},
        {"output", price.output},
        {"cached_input", price.cached_input},
        {"cache_write", price.cache_write},
        {"cache_write_1h", price.cache_write_1h}};
    for (const auto& [key, usd] : prices)
        if (usd && !usable_price(*usd)) return not_a_price(model_or_pattern, key);
    if (model_or_pattern.back() == '*') {
        model_or_pattern.pop_back();
        prefixes_[std::move(model_or_pattern)] = price;
    } else {
        exact_[std::move(model_or_pattern)] = price;
    }
    return std::nullopt;
}

const ModelPrice* PriceTable::find(std::string_view model) const {
    if (auto it = exact_.find(model); it != exact_.end()) return &it->second;
    const ModelPrice* best = nullptr;
    std::size_t longest = 0;
    for (const auto& [prefix, price] : prefixes_)
        if (model.starts_with(prefix) && (!best || prefix.size() > longest)) {
            best = &price;
            longest = prefix.size();
        }
    return best;
}

std::optional<double> PriceTable::cost(std::string_view model, const Usage& usage) const {
    const ModelPrice* p = find(model);
    if (!p) return std::nullopt;
    const double cached = static_cast<double>(usage.cached_input_tokens);
    const double written = static_cast<double>(usage.cache_write_input_tokens);
    const double hour = static_cast<double>(
        std::min(usage.cache_write_1h_input_tokens, usage.cache_write_input_tokens));
    const double plain = std::max(0.0, static_cast<double>(usage.input_tokens) - cached - written);
    const double write_5m = p->cache_write.value_or(p->input);
    const double write_1h = p->cache_write_1h.value_or(write_5m);
    const double usd_per_million = plain * p->input + cached * p->cached_input.value_or(p->input) +
                                   (written - hour) * write_5m + hour * write_1h +
                                   static_cast<double>(usage.output_tokens) * p->output;
    return usd_per_million / 1e6;
}

}  // namespace nous::llm
