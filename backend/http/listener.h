#pragma once
// The listener: the TLS context of new connections, the accept loop and the admission of a
// connection (a session, or 503 over the connection limit).
//
// Beast/Asio: included only through server.cpp (see server_state.h).

#include <chrono>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "backend/http/server_state.h"
#include "backend/http/session.h"

namespace podium::http {

// The TLS context of new connections; replaced whole on reload (SIGHUP), so connections keep
// the context they started with.
inline std::shared_ptr<net::ssl::context> load_tls(const std::string& cert_file,
                                                   const std::string& key_file) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_server);
  ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                   net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                   net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
  beast::error_code ec;
  ctx->use_certificate_chain_file(cert_file, ec);
  if (ec)
    throw std::runtime_error("tls: cannot load the certificate chain " + cert_file + ": " +
                             ec.message());
  ctx->use_private_key_file(key_file, net::ssl::context::pem, ec);
  if (ec)
    throw std::runtime_error("tls: cannot load the private key " + key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1)
    throw std::runtime_error("tls: the private key " + key_file +
                             " does not match the certificate " + cert_file);
  return ctx;
}

// A new connection: served, or over the connection limit answered 503 and closed.
template <class S>
void admit(HttpServer::Impl& server, std::shared_ptr<S> session) {
  if (server.connections.load() >= server.options.max_connections) {
    // Over the limit: answer 503 and close instead of silently queueing work.
    ++server.connections;
    {
      std::lock_guard lock(server.mu);
      server.sessions.insert(session);
    }
    server.reject(503, "connection limit reached", session->remote);
    net::dispatch(session->stream.get_executor(), [session] {
      session->busy = false;
      if constexpr (S::kTls) {
        // Over TLS the answer needs a handshake first; closing says as much at less cost.
        session->close();
      } else {
        session->write_and_linger(problem_response(503, "too many open connections"));
      }
    });
    return;
  }
  ++server.connections;
  {
    std::lock_guard lock(server.mu);
    server.sessions.insert(session);
  }
  session->start();
}

// The accept loop: one session per connection, each on its own strand.
inline void accept_next(HttpServer::Impl& server) {
  server.acceptor.async_accept(
      net::make_strand(server.ioc), [&server](beast::error_code ec, tcp::socket socket) {
        if (ec) {
          if (ec == net::error::operation_aborted || !server.acceptor.is_open()) return;
          // Out of files (EMFILE/ENFILE) or buffers: accepting again at once fails again at once,
          // and the loop would take an I/O thread from every open connection. The pending
          // connections wait in the listen backlog meanwhile.
          server.accept_backoff.expires_after(std::chrono::milliseconds(50));
          server.accept_backoff.async_wait([&server](beast::error_code wait_ec) {
            if (!wait_ec && !server.stopping && server.acceptor.is_open()) accept_next(server);
          });
          return;
        }
        if (server.stopping) return;
        std::shared_ptr<net::ssl::context> context;
        {
          std::lock_guard lock(server.mu);
          context = server.tls;
        }
        if (context) {
          auto session = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
              server, std::move(socket), *context);
          session->tls_keepalive = context;
          admit(server, session);
        } else {
          admit(server, std::make_shared<Session<beast::tcp_stream>>(server, std::move(socket)));
        }
        accept_next(server);
      });
}

}  // namespace podium::http
