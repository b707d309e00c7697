#pragma once
// embed()'s work without an observer (nous_llm internal): the public embed()
// (chat/embed_call.cpp) reports its start and end around it, as run_chat does.

#include "nous/llm/embed.hpp"

namespace nous::llm::detail {

Result<Embeddings> run_embed(const EmbedRequest& request, const nous::http::Options& options);

}  // namespace nous::llm::detail
