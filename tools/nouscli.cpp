// nouscli: the command-line face of nous-http. Interface and exit codes are a
// contract (docs/design/nouscli.md): tests outside the project use them.
// This file dispatches to the subcommands (tools/cmd_*.cpp).

#include <csignal>
#include <iostream>
#include <string>

#include "cli.hpp"

using namespace nouscli;

int main(int argc, char** argv) {
    // A closed stdout must not kill us: writes fail with EPIPE instead.
    std::signal(SIGPIPE, SIG_IGN);
    if (argc < 2 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
        std::cout << "usage: nouscli post URL [options]\n       nouscli chat PROMPT --model NAME "
                     "[options]\n"
                     "       nouscli embed [TEXT...] --model NAME [options]\n"
                     "       nouscli count-tokens PROMPT --model NAME [options]\n"
                     "       nouscli mock-server [--port N] [options]\n";
        return argc < 2 ? usage : ok;
    }
    std::string command = argv[1];
    if (command == "post") return cmd_post(argc - 1, argv + 1);
    if (command == "chat") return cmd_chat(argc - 1, argv + 1);
    if (command == "count-tokens") return cmd_count_tokens(argc - 1, argv + 1);
    if (command == "embed") return cmd_embed(argc - 1, argv + 1);
    if (command == "mock-server") return cmd_mock_server(argc - 1, argv + 1);
    std::cerr << "nouscli: unknown command '" << command << "'\n(see nouscli --help)\n";
    return usage;
}
