// A string as JSON text (json_string.hpp).

#include "json/json_string.hpp"

namespace nous::llm::detail {

void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    // Runs with nothing to escape are appended whole.
    std::size_t plain = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(text[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        out.append(text.substr(plain, i - plain));
        plain = i + 1;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default: {
                static constexpr char digits[] = "0123456789abcdef";
                const char escaped[] = {'\\', 'u', '0', '0', digits[c >> 4], digits[c & 15]};
                out.append(escaped, sizeof escaped);
            }
        }
    }
    out.append(text.substr(plain));
    out += '"';
}

}  // namespace nous::llm::detail
