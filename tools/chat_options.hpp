#pragma once
// nouscli chat's request options beyond the conversation: structured outputs
// (--schema, --json-object), tool choice, sampling, stop sequences and
// --extra-body, read into a ChatRequest and checked before any connection.

#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "nous/llm/request.hpp"

namespace nouscli {

class ChatRequestOptions {
  public:
    void add_to(po::options_description& desc);
    /// Into `request`; a usage error's words in `error` (exit 2).
    bool apply(const po::variables_map& vm, nous::llm::ChatRequest& request,
               std::string& error) const;
    /// --partial: one line per delta with the partial value.
    bool partial() const noexcept { return partial_; }
    void take_flags(const po::variables_map& vm) { partial_ = vm.count("partial") > 0; }

  private:
    std::string schema_file_, schema_name_ = "response", tool_choice_, extra_body_,
                              anthropic_version_, api_version_, region_, project_, location_,
                              prices_file_, cache_, cache_ttl_, prompt_cache_key_,
                              prompt_cache_retention_, cached_content_;
    std::vector<std::string> stop_;
    double temperature_ = 0, top_p_ = 0;
    long long seed_ = 0;
    bool partial_ = false;
};

}  // namespace nouscli
