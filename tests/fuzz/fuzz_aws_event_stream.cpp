// libFuzzer: the AWS event-stream decoder, whole and in pieces (same output
// required); botocore's vectors (tests/fixtures/aws_eventstream) seed it.

#include "decoder_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A small cap so that the overflow path is reached too.
    nous::fuzz::check_split_invariance(
        [] { return nous::http::make_aws_event_stream_decoder(4096); }, data, size);
    return 0;
}
