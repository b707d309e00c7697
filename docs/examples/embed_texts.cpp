// Embeddings with nous_llm: texts in, one float32 matrix out (row i for
// input i), batched and decoded straight into the rows.
//
//   embed_texts PROVIDER BASE_URL     PROVIDER: openai or gemini

#include <cstdlib>
#include <iostream>
#include <nous/llm/embed.hpp>

int main(int argc, char** argv) {
    if (argc < 3 || !nous::llm::provider_from_name(argv[1])) {
        std::cerr << "usage: embed_texts PROVIDER BASE_URL\n";
        return 2;
    }
    using namespace nous::llm;
    EmbedRequest request;
    request.provider = *provider_from_name(argv[1]);
    request.base_url = argv[2];
    request.model = "text-embedding-3-small";
    if (const char* key = std::getenv(default_api_key_env(request.provider).c_str()))
        request.api_key = key;
    request.inputs = {"the first document", "the second document", "a third"};
    request.dimensions = 8;

    auto matrix = embed(request);
    if (!matrix) {
        std::cerr << to_string(matrix.error().code) << ": " << matrix.error().message << "\n";
        return 1;
    }
    for (std::size_t row = 0; row < matrix->count; ++row) {
        const float* values = matrix->values.data() + row * matrix->dimensions;
        std::cout << "row " << row << ": " << matrix->dimensions << " values, first " << values[0]
                  << "\n";
    }
    return 0;
}
