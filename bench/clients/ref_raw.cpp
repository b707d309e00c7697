// ref-raw and ref-raw-events (tools/bench/clients/ref_raw.hpp).

#include "ref_raw.hpp"

namespace bench {

std::unique_ptr<Client> make_raw_client(bool nodelay, bool events_mode) {
    return std::make_unique<RawClient>(nodelay, events_mode);
}

}  // namespace bench
