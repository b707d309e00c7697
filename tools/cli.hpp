#pragma once
// What nouscli's subcommands share: exit codes, error reports, output, the
// options every subcommand that makes a request takes (-H, timeouts,
// --retry, -v, --insecure, --cacert), and option parsing. The interface is a
// contract (docs/design/nouscli.md). Public API only, like any application.

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nous/http/client.hpp"
#include "nous/llm/provider.hpp"

namespace nouscli {

namespace po = boost::program_options;
using nous::http::Error;
using nous::http::Headers;
using nous::http::Options;

enum Exit {
    ok = 0,
    usage = 2,
    connection = 3,
    timeout = 4,
    http_error = 5,
    stream_error = 6,
    output_error = 7,  ///< a structured answer refused, not JSON, or breaking its schema
};

/// The exit code of an error (docs/design/nouscli.md).
int exit_code_for(const Error& e);
/// "nouscli: MESSAGE" and the subcommand's help hint on stderr; exit 2.
int usage_error(std::string_view command, const std::string& message);
/// An error the call ended with: "nouscli: CODE: MESSAGE" on stderr; its exit code.
int report_error(const Error& e);
/// An error a provider call (chat, embed) ended with: its request id under
/// -v, a status >= 400 in the provider's words (an exhausted quota said so:
/// never retried, whatever --retry says), anything else as report_error.
int report_provider_error(const Error& e, bool verbose);

/// Writes all of `data`; false when stdout is closed (EPIPE): the caller exits 0 quietly.
bool write_out(std::FILE* out, std::string_view data);
/// The status line and headers, on stderr.
void print_head(int status, const Headers& headers, const std::string& version);
/// -v: the request line, its headers (secrets redacted) and a body line, on stderr.
void print_request(const std::string& url, const Headers& headers, const std::string& body_line);

/// -d DATA: the text, @FILE, or @- for stdin; false with `error` for any read failure.
bool read_data_argument(const std::string& arg, std::string& body, std::string& error);

/// The options of every subcommand that makes a request.
class ConnectionOptions {
  public:
    void add_to(po::options_description& desc);
    /// Headers and --retry checked; false with `error` set (a usage error).
    bool parse(Headers& headers, std::string& error) const;
    /// Timeouts, retries and TLS settings into `options`.
    void apply(Options& options) const;
    bool verbose() const noexcept { return verbose_; }
    /// Quiet library warnings unless -v or NOUS_LOG_LEVEL: the tool reports errors itself.
    void set_log_level() const;
    /// After parsing: the flags po stored.
    void take_flags(const po::variables_map& vm);

  private:
    std::vector<std::string> header_args_;
    std::string cacert_;
    long long connect_ms_ = -1, timeout_ms_ = -1;
    bool connect_given_ = false, timeout_given_ = false;
    int retry_ = 0;
    bool verbose_ = false, insecure_ = false;
};

/// Parses `desc` into `vm`, with one positional argument (before or after
/// the options) when `name` is given; an exit code when the command ends
/// here (a usage error, or --help printed).
std::optional<int> parse_command(std::string_view command, int argc, char** argv,
                                 const po::options_description& desc, po::variables_map& vm,
                                 const char* name = nullptr,
                                 std::string* positional_value = nullptr);
/// The same, with any number of positional arguments into `positional_values`.
std::optional<int> parse_command(std::string_view command, int argc, char** argv,
                                 const po::options_description& desc, po::variables_map& vm,
                                 const char* name, std::vector<std::string>* positional_values);

/// The provider's credential from the environment, before any connection:
/// the variable `api_key_env` names (the provider's own when empty); for
/// azure, when that is unset and no other was asked for,
/// AZURE_OPENAI_AD_TOKEN (which the library reads: `key` stays empty); for
/// bedrock, when AWS_BEARER_TOKEN_BEDROCK is unset, SigV4 with the AWS
/// credentials the library finds (`key` empty); for vertex*, when
/// GOOGLE_OAUTH_ACCESS_TOKEN is unset, the key file the library finds.
/// false, and `error` naming the variables, when there is none.
bool credential_from_env(nous::llm::Provider provider, std::string& api_key_env, std::string& key,
                         std::string& error);

int cmd_post(int argc, char** argv);
int cmd_chat(int argc, char** argv);
int cmd_count_tokens(int argc, char** argv);
int cmd_mock_server(int argc, char** argv);
int cmd_embed(int argc, char** argv);

}  // namespace nouscli
