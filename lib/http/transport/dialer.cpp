// Happy Eyeballs (RFC 8305): staggered non-blocking connects, first one wins.

#include "transport/dialer.hpp"

#include <Poco/Exception.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>

#include "core/limits.hpp"
#include "transport/socket_interrupt.hpp"

namespace nous::http::detail {

std::vector<ResolvedAddress> interleave_families(const std::vector<ResolvedAddress>& addresses) {
    if (addresses.empty()) return {};
    const int first = addresses.front().family();
    std::vector<ResolvedAddress> preferred, other, out;
    for (const auto& a : addresses) (a.family() == first ? preferred : other).push_back(a);
    out.reserve(addresses.size());
    for (std::size_t i = 0; i < std::max(preferred.size(), other.size()); ++i) {
        if (i < preferred.size()) out.push_back(preferred[i]);
        if (i < other.size()) out.push_back(other[i]);
    }
    return out;
}

namespace {

/// One address being connected to. The registration is declared after the
/// socket so that it is dropped first: a cancel never shuts down an fd that
/// was closed and reused.
struct InFlight {
    Poco::Net::StreamSocket socket;
    std::unique_ptr<SocketRegistration> registration;
    ResolvedAddress address;
};

}  // namespace

Result<Poco::Net::StreamSocket> dial(const std::vector<ResolvedAddress>& addresses,
                                     const SocketSetup& setup, const std::string& peer,
                                     const Deadlines& deadlines, const CancelToken* cancel) {
    const std::vector<ResolvedAddress> order = interleave_families(addresses);
    const Clock::time_point limit = deadlines.connect_limit();
    std::vector<InFlight> pending;
    std::string failures;
    auto failed = [&](const ResolvedAddress& a, const std::string& why) {
        failures += (failures.empty() ? "" : "; ") + a.to_string() + ": " + why;
    };
    std::size_t next = 0;
    Clock::time_point next_start = Clock::now();
    std::vector<pollfd> fds;
    for (;;) {
        if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled while connecting");
        Clock::time_point now = Clock::now();
        // Start the next attempt: when its time has come, or when nothing is in flight.
        while (next < order.size() && (pending.empty() || now >= next_start)) {
            const ResolvedAddress& address = order[next++];
            // socket() fails under EMFILE/ENFILE (and POCO throws): a typed
            // error, never an exception out of post() or a leaked pool slot.
            std::optional<Poco::Net::StreamSocket> created;
            try {
                created.emplace(address.family() == AF_INET6 ? Poco::Net::SocketAddress::IPv6
                                                             : Poco::Net::SocketAddress::IPv4);
            } catch (const Poco::Exception& e) {
                if (pending.empty() && next == order.size())
                    return Error(ErrorCode::connect_failed,
                                 "cannot create a socket: " + e.displayText());
                failed(address, "cannot create a socket: " + e.displayText());
                continue;
            }
            const int fd = created->impl()->sockfd();
            // Before the SYN: the window scale is fixed at handshake time.
            if (setup.receive_buffer_bytes > 0)
                ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &setup.receive_buffer_bytes, sizeof(int));
            const int nodelay = setup.tcp_nodelay ? 1 : 0;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, sizeof nodelay);
            created->setBlocking(false);
            // Published before connect(), so that cancel() can shut it down mid-connect.
            auto registration = std::make_unique<SocketRegistration>(cancel, fd);
            const int rc =
                ::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length);
            if (rc == 0) {
                created->setBlocking(true);
                return std::move(*created);
            }
            if (errno != EINPROGRESS) {
                failed(address, std::strerror(errno));
                continue;  // the next attempt starts at once
            }
            pending.push_back(InFlight{std::move(*created), std::move(registration), address});
            next_start = now + limits::connection_attempt_delay;
        }
        if (pending.empty()) {
            if (is_cancelled(cancel))
                return Error(ErrorCode::cancelled, "cancelled while connecting");
            return Error(ErrorCode::connect_failed,
                         "cannot connect to " + peer + " (" + failures + ")");
        }
        now = Clock::now();
        if (now >= limit) {
            std::string waiting;
            for (const auto& p : pending)
                waiting += (waiting.empty() ? "" : ", ") + p.address.to_string();
            return Error(deadlines.connect_timeout_code(),
                         "timed out connecting to " + peer + " (" + waiting + ")" +
                             (failures.empty() ? "" : "; " + failures));
        }
        Clock::time_point wake = limit;
        if (next < order.size()) wake = std::min(wake, next_start);
        fds.clear();
        for (const auto& p : pending) fds.push_back(pollfd{p.socket.impl()->sockfd(), POLLOUT, 0});
        const int rc = ::poll(fds.data(), fds.size(), std::max(1, millis_until(wake)));
        if (rc < 0 && errno != EINTR)
            return Error(ErrorCode::connect_failed, std::string("poll: ") + std::strerror(errno));
        if (rc <= 0) continue;
        if (is_cancelled(cancel)) return Error(ErrorCode::cancelled, "cancelled while connecting");
        bool any_failed = false;
        for (std::size_t i = fds.size(); i-- > 0;) {
            if (fds[i].revents == 0) continue;
            int err = 0;
            socklen_t len = sizeof err;
            ::getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
            if (err == 0) {
                InFlight& winner = pending[i];
                winner.registration.reset();
                winner.socket.setBlocking(true);
                // The others close as `pending` goes (registrations first).
                return std::move(winner.socket);
            }
            failed(pending[i].address, std::strerror(err));
            pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
            any_failed = true;
        }
        if (any_failed) next_start = Clock::now();  // a failure starts the next attempt at once
    }
}

}  // namespace nous::http::detail
