#pragma once
// Server-Sent Events and other streamed bodies (Response::stream): chunked transfer, chunks
// pulled on the handler pool (BodyStream::next may block briefly) and written on the
// connection's strand one at a time; a stream with nothing to send is parked without a thread
// (BodyStream::idle) until a wake-up or its timeout.
//
// Beast/Asio: included only through server.cpp (see server_state.h).

#include <memory>
#include <optional>
#include <string>

#include "backend/http/server_state.h"

namespace podium::http {

// Session: the connection (session.h) the stream is written to; it is closed when the stream
// ends, as a streamed response does not keep the connection alive.
template <class Session>
class EventStream : public std::enable_shared_from_this<EventStream<Session>> {
 public:
  EventStream(std::shared_ptr<Session> session, std::shared_ptr<BodyStream> body)
      : session_(std::move(session)), body_(std::move(body)) {}

  void start(Response res, unsigned version) {
    auto& s = *session_;
    auto msg = std::make_shared<bhttp::response<bhttp::empty_body>>(
        static_cast<bhttp::status>(res.status), version);
    for (auto& [k, v] : res.headers) msg->set(k, v);
    msg->set(bhttp::field::server, "podium");
    msg->chunked(true);
    msg->keep_alive(false);
    auto sr = std::make_shared<bhttp::response_serializer<bhttp::empty_body>>(*msg);
    s.pending_write = msg;
    // A stream's send buffer is fixed small: with the kernel's autotuning (up to 4 MB) a
    // follower that never reads soaks up megabytes of log before a write blocks and the write
    // deadline starts, so a live stream kept it open for minutes. 128 KB (the kernel doubles it)
    // still carries a few MB/s at a WAN's round trip.
    beast::error_code buffer_ec;
    s.tcp().socket().set_option(net::socket_base::send_buffer_size(128 * 1024), buffer_ec);
    s.tcp().expires_after(s.server.options.write_timeout);
    bhttp::async_write_header(
        s.stream, *sr,
        [self = this->shared_from_this(), sr, msg](beast::error_code ec, std::size_t) {
          if (ec) return self->fail();
          self->pull();
        });
  }

 private:
  void pull() {
    if (session_->server.stopping) return end();
    net::post(*session_->server.handlers, [self = this->shared_from_this()] {
      std::string chunk;
      bool more = false;
      std::optional<Wait> idle;
      try {
        more = self->body_->next(chunk);
        if (chunk.empty() && more) idle = self->body_->idle();
      } catch (const std::exception&) {
        more = false;
      }
      net::post(self->session_->stream.get_executor(),
                [self, more, idle = std::move(idle), chunk = std::move(chunk)]() mutable {
                  self->write(std::move(chunk), more, std::move(idle));
                });
    });
  }

  // On the strand: the chunk next() gave, or a wait when it had none yet.
  void write(std::string chunk, bool more, std::optional<Wait> idle) {
    auto& s = *session_;
    if (s.closed) return;
    if (chunk.empty()) {
      if (!more) return end();
      if (idle)  // nothing to send: wait without a thread, then ask again
        return s.park(std::move(*idle), [self = this->shared_from_this()](bool) { self->pull(); });
      return pull();
    }
    auto data = std::make_shared<std::string>(std::move(chunk));
    s.tcp().expires_after(s.server.options.write_timeout);
    net::async_write(
        s.stream, bhttp::make_chunk(net::buffer(*data)),
        [self = this->shared_from_this(), data, more](beast::error_code ec, std::size_t) {
          if (ec) return self->fail();
          if (!more) return self->end();
          self->pull();
        });
  }

  void end() {
    auto& s = *session_;
    s.tcp().expires_after(s.server.options.write_timeout);
    net::async_write(
        s.stream, bhttp::make_chunk_last(),
        [self = this->shared_from_this()](beast::error_code, std::size_t) { self->fail(); });
  }

  // The stream is over (ended, or the client went away): the connection closes.
  void fail() {
    session_->finish_request();
    session_->close();
  }

  std::shared_ptr<Session> session_;
  std::shared_ptr<BodyStream> body_;
};

}  // namespace podium::http
