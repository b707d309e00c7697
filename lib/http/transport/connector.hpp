#pragma once
// Opening a connection for one pool key: resolve, connect (Happy Eyeballs),
// tunnel through the proxy if any, and the TLS handshake, all under the
// connect deadline; and the connector that does it for a pool, keeping the
// origin's TLS context and last session.

#include <Poco/Net/Context.h>
#include <Poco/Net/Session.h>

#include <memory>
#include <mutex>

#include "transport/connection.hpp"
#include "transport/connection_key.hpp"

namespace nous::http::detail {

/// Opens POCO connections for one key; keeps the TLS context and the last
/// session of the origin so that new connections resume it.
class PocoConnector final : public Connector {
  public:
    explicit PocoConnector(ConnectionKey key) : key_(std::move(key)) {}
    Result<std::unique_ptr<Transport>> connect(const Deadlines& deadlines,
                                               const CancelToken* cancel,
                                               ConnectTimings& timings) override;
    void on_reusable(Transport& transport) override;
    void forget_tls_session() override;

  private:
    const ConnectionKey key_;
    std::mutex mutex_;
    Poco::Net::Context::Ptr tls_context_;  ///< guarded by mutex_; made on first https connect
    Poco::Net::Session::Ptr tls_session_;  ///< guarded by mutex_
};

/// Resolve, connect to every address in turn, tunnel through the proxy if
/// any, and complete the TLS handshake, all under the connect deadline.
Result<std::unique_ptr<Connection>> open_connection(const ConnectionKey& key,
                                                    Poco::Net::Context::Ptr tls_context,
                                                    Poco::Net::Session::Ptr tls_session,
                                                    const Deadlines& deadlines,
                                                    const CancelToken* cancel,
                                                    ConnectTimings& timings);

}  // namespace nous::http::detail
