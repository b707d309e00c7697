// libFuzzer: the NOUS_HTTP_CONFIG file: any bytes give a Config or a clear
// refusal, never a crash (deep JSON included).

#include <string>

#include "core/config.hpp"
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string error;
    auto config = nous::http::detail::parse_config_text(
        std::string_view(reinterpret_cast<const char*>(data), size), &error);
    if (!config) nous::fuzz::require(!error.empty());
    if (config && config->max_retries) nous::fuzz::require(*config->max_retries >= 0);
    return 0;
}
