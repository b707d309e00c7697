// The providers by name, with their defaults: what each format says of itself.

#include "nous/llm/provider.hpp"

#include "formats/wire_format.hpp"

namespace nous::llm {

std::string_view to_string(Provider provider) noexcept {
    return detail::wire_format(provider).name();
}

std::optional<Provider> provider_from_name(std::string_view name) noexcept {
    const detail::WireFormat* format = detail::wire_format_named(name);
    if (!format) return std::nullopt;
    return format->provider();
}

std::string default_base_url(Provider provider) {
    return std::string(detail::wire_format(provider).default_base_url());
}

std::string default_api_key_env(Provider provider) {
    return std::string(detail::wire_format(provider).default_api_key_env());
}

}  // namespace nous::llm
