// Pool, transactions, parameters and error kinds against a real PostgreSQL.
#include "backend/db/database.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/integration/db/scratch_database.h"

namespace podium::db {
namespace {

using namespace std::chrono_literals;
using testing::ScratchDatabase;
using Ms = std::chrono::milliseconds;

class DbDatabase : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!testing::test_database_url()) {
      GTEST_SKIP() << "PODIUM_TEST_DATABASE_URL is not set; start a test server with "
                      "`export PODIUM_TEST_DATABASE_URL=$(scripts/test-postgres.sh start)`";
    }
    scratch_ = std::make_unique<ScratchDatabase>();
    PoolOptions o;
    o.conninfo = scratch_->conninfo();
    o.max_connections = 4;
    db_ = std::make_unique<Database>(o);
    auto tx = db_->begin();
    tx.exec(
        "CREATE TABLE items (id bigserial PRIMARY KEY, name text UNIQUE NOT NULL,"
        " qty int CHECK (qty >= 0), price double precision, note text)");
    tx.exec("CREATE TABLE tags (item_id bigint NOT NULL REFERENCES items(id), tag text)");
    tx.commit();
  }
  void TearDown() override {
    db_.reset();  // close connections before the database is dropped
    scratch_.reset();
  }
  int64_t count_items() {
    auto tx = db_->begin(TxMode::read_only);
    return tx.exec("SELECT count(*) AS n FROM items").int64(0, "n");
  }
  DbError::Kind kind_of(const std::function<void()>& fn) {
    try {
      fn();
    } catch (const DbError& e) {
      return e.kind();
    }
    ADD_FAILURE() << "no DbError thrown";
    return DbError::Kind::other;
  }

  // The fixture's options with a pool of this size and acquire deadline.
  PoolOptions pool_of(int max_connections, Ms acquire_timeout) const {
    PoolOptions o = db_->options();
    o.max_connections = max_connections;
    o.acquire_timeout = acquire_timeout;
    return o;
  }
  // Polls (up to 400 ms) until `n` callers wait for a connection of `db`; how many do.
  static int waiting_when(Database& db, int n) {
    for (int i = 0; i < 400 && db.stats().waiting != n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return db.stats().waiting;
  }

  std::unique_ptr<ScratchDatabase> scratch_;
  std::unique_ptr<Database> db_;
};

TEST_F(DbDatabase, CommitKeepsWrites) {
  auto tx = db_->begin();
  auto r = tx.exec("INSERT INTO items (name, qty) VALUES ($1, $2) RETURNING id", {"a", "1"});
  EXPECT_EQ(r.size(), 1u);
  EXPECT_EQ(r.affected_rows(), 1);
  tx.commit();
  EXPECT_EQ(count_items(), 1);
}

TEST_F(DbDatabase, DestructorRollsBackUncommittedWork) {
  {
    auto tx = db_->begin();
    tx.exec("INSERT INTO items (name) VALUES ($1)", {"gone"});
  }
  EXPECT_EQ(count_items(), 0);
  // The connection went back clean: the pool still works.
  EXPECT_EQ(db_->stats().in_use, 0);
}

TEST_F(DbDatabase, ParametersAreStoredLiterally) {
  const std::vector<std::string> values = {"'); DROP TABLE items; --",
                                           "$1",
                                           "Robert'); DELETE FROM items WHERE ('1'='1",
                                           "back\\slash \"quotes\"",
                                           "ünïcödé ✓ 日本",
                                           "line\nbreak\ttab"};
  auto tx = db_->begin();
  for (const auto& v : values) tx.exec("INSERT INTO items (name, note) VALUES ($1, $2)", {v, v});
  tx.exec("INSERT INTO items (name, note) VALUES ($1, $2)", {"null-note", std::nullopt});
  tx.commit();

  auto ro = db_->begin(TxMode::read_only);
  for (const auto& v : values) {
    auto r = ro.exec("SELECT name, note FROM items WHERE name = $1", {v});
    ASSERT_EQ(r.size(), 1u) << v;
    EXPECT_EQ(r.at(0, "name"), v);
    EXPECT_EQ(r.opt(0, "note"), v);
  }
  auto r = ro.exec("SELECT note FROM items WHERE name = $1", {"null-note"});
  EXPECT_TRUE(r.is_null(0, "note"));
  EXPECT_EQ(r.opt(0, "note"), std::nullopt);
  EXPECT_EQ(r.at(0, "note"), "");
  EXPECT_EQ(ro.exec("SELECT count(*) AS n FROM items").int64(0, "n"),
            static_cast<int64_t>(values.size()) + 1);
}

TEST_F(DbDatabase, ResultAccessors) {
  auto tx = db_->begin(TxMode::read_only);
  auto r = tx.exec(
      "SELECT 42::bigint AS i, NULL::bigint AS n, 2.5::float8 AS d, 'NaN'::float8 AS nan,"
      " '-Infinity'::float8 AS minf, true AS t, false AS f, 'x' AS \"MixedCase\"");
  EXPECT_EQ(r.columns(), 8u);
  EXPECT_EQ(r.column_name(0), "i");
  EXPECT_EQ(r.column_index("MixedCase"), 7);
  EXPECT_EQ(r.column_index("mixedcase"), -1);
  EXPECT_EQ(r.int64(0, "i"), 42);
  EXPECT_EQ(r.int64(0, "n"), 0);
  EXPECT_EQ(r.opt_int64(0, "n"), std::nullopt);
  EXPECT_EQ(r.opt_double(0, "d"), 2.5);
  EXPECT_TRUE(std::isnan(*r.opt_double(0, "nan")));
  EXPECT_EQ(r.opt_double(0, "minf"), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(r.boolean(0, "t"));
  EXPECT_FALSE(r.boolean(0, "f"));
  EXPECT_EQ(r.command_tag(), "SELECT 1");
  EXPECT_EQ(kind_of([&] { r.at(0, "missing"); }), DbError::Kind::other);
  EXPECT_EQ(kind_of([&] { r.at(1, "i"); }), DbError::Kind::other);
  EXPECT_EQ(kind_of([&] { r.int64(0, "MixedCase"); }), DbError::Kind::other);
  Result empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(empty.affected_rows(), 0);
}

TEST_F(DbDatabase, UniqueViolationCarriesKindAndConstraint) {
  db_->transact([](Transaction& tx) { tx.exec("INSERT INTO items (name) VALUES ('dup')"); });
  try {
    auto tx = db_->begin();
    tx.exec("INSERT INTO items (name) VALUES ($1)", {"dup"});
    FAIL() << "expected a unique violation";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::unique_violation);
    EXPECT_EQ(e.sqlstate(), "23505");
    EXPECT_EQ(e.constraint(), "items_name_key");
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
}

TEST_F(DbDatabase, ForeignKeyCheckAndDataErrorKinds) {
  EXPECT_EQ(kind_of([&] {
              auto tx = db_->begin();
              tx.exec("INSERT INTO tags (item_id, tag) VALUES ($1, 'x')", {"999"});
            }),
            DbError::Kind::foreign_key);
  EXPECT_EQ(kind_of([&] {
              auto tx = db_->begin();
              tx.exec("INSERT INTO items (name, qty) VALUES ('neg', $1)", {"-1"});
            }),
            DbError::Kind::check_violation);
  EXPECT_EQ(kind_of([&] {
              auto tx = db_->begin();
              tx.exec("INSERT INTO items (name, qty) VALUES ('bad', $1)", {"not a number"});
            }),
            DbError::Kind::check_violation);
  EXPECT_EQ(kind_of([&] {
              auto tx = db_->begin();
              tx.exec("SELEC nonsense");
            }),
            DbError::Kind::other);
}

TEST_F(DbDatabase, StatementTimeoutKind) {
  PoolOptions o = db_->options();
  o.statement_timeout = 200ms;
  Database db(o);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of([&] {
              auto tx = db.begin();
              tx.exec("SELECT pg_sleep(5)");
            }),
            DbError::Kind::timeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  // Raising it for one transaction works and is reset afterwards.
  {
    auto tx = db.begin();
    tx.set_statement_timeout(2000ms);
    tx.exec("SELECT pg_sleep(0.4)");
    tx.commit();
  }
  EXPECT_EQ(kind_of([&] {
              auto tx = db.begin();
              tx.exec("SELECT pg_sleep(0.4)");
            }),
            DbError::Kind::timeout);
}

TEST_F(DbDatabase, SerializationFailureIsRetryable) {
  db_->transact(
      [](Transaction& tx) { tx.exec("INSERT INTO items (name, qty) VALUES ('a', 1), ('b', 1)"); });
  // Write skew: each transaction reads what the other writes. PostgreSQL's SSI aborts one.
  auto t1 = db_->begin();
  auto t2 = db_->begin();
  t1.exec("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
  t2.exec("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE");
  t1.exec("SELECT sum(qty) FROM items");
  t2.exec("SELECT sum(qty) FROM items");
  t1.exec("UPDATE items SET qty = qty + 1 WHERE name = 'a'");
  t2.exec("UPDATE items SET qty = qty + 1 WHERE name = 'b'");
  t1.commit();
  try {
    t2.commit();
    FAIL() << "expected a serialization failure";
  } catch (const DbError& e) {
    EXPECT_EQ(e.kind(), DbError::Kind::retryable);
    EXPECT_EQ(e.sqlstate(), "40001");
  }
}

TEST_F(DbDatabase, TransactRetriesRetryableOnly) {
  int calls = 0;
  const int64_t id = db_->transact([&](Transaction& tx) {
    ++calls;
    auto r = tx.exec("INSERT INTO items (name) VALUES ('once') RETURNING id");
    if (calls < 3) throw DbError(DbError::Kind::retryable, "40001", "simulated");
    return r.int64(0, "id");
  });
  EXPECT_EQ(calls, 3);
  EXPECT_GT(id, 0);
  EXPECT_EQ(count_items(), 1);  // the two failed attempts were rolled back

  calls = 0;
  EXPECT_EQ(kind_of([&] {
              db_->transact([&](Transaction&) {
                ++calls;
                throw DbError(DbError::Kind::unique_violation, "23505", "simulated");
              });
            }),
            DbError::Kind::unique_violation);
  EXPECT_EQ(calls, 1);

  calls = 0;
  EXPECT_EQ(kind_of([&] {
              db_->transact([&](Transaction&) {
                ++calls;
                throw DbError(DbError::Kind::retryable, "40P01", "simulated");
              });
            }),
            DbError::Kind::retryable);
  EXPECT_EQ(calls, 5);
}

TEST_F(DbDatabase, ReadOnlyTransactionRefusesWrites) {
  try {
    auto tx = db_->begin(TxMode::read_only);
    EXPECT_EQ(tx.mode(), TxMode::read_only);
    tx.exec("INSERT INTO items (name) VALUES ('ro')");
    FAIL() << "write in a read-only transaction succeeded";
  } catch (const DbError& e) {
    EXPECT_EQ(e.sqlstate(), "25006");
    EXPECT_EQ(e.kind(), DbError::Kind::other);
  }
}

TEST_F(DbDatabase, CommitAfterSwallowedErrorThrows) {
  auto tx = db_->begin();
  tx.exec("INSERT INTO items (name) VALUES ('lost')");
  EXPECT_THROW(tx.exec("SELECT 1/0"), DbError);
  EXPECT_THROW(tx.commit(), DbError);
  EXPECT_THROW(tx.exec("SELECT 1"), DbError);  // finished
  EXPECT_EQ(count_items(), 0);
}

TEST_F(DbDatabase, PoolExhaustionFailsWithinTheDeadline) {
  Database db(pool_of(2, 300ms));
  auto a = db.begin();
  auto b = db.begin();
  EXPECT_EQ(db.stats().in_use, 2);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of([&] { db.begin(); }), DbError::Kind::unavailable);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 250ms);
  EXPECT_LT(waited, 1500ms);

  // A waiter gets the connection as soon as one is released.
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto tx = db.begin();
    got = true;
  });
  EXPECT_EQ(waiting_when(db, 1), 1);
  EXPECT_FALSE(got.load());
  a.commit();
  waiter.join();
  EXPECT_TRUE(got.load());
  const PoolStats s = db.stats();
  EXPECT_EQ(s.connections_opened, 2u);
  EXPECT_GE(s.errors, 1u);
  EXPECT_EQ(s.max_connections, 2);
}

TEST_F(DbDatabase, ANewcomerQueuesBehindWaitersInsteadOfTakingTheFreedSlot) {
  Database db(pool_of(1, 500ms));
  auto held = db.begin();
  std::promise<void> let_go;
  std::atomic<bool> waiter_got{false};
  std::thread waiter([&] {
    auto tx = db.begin();
    waiter_got = true;
    let_go.get_future().wait();
  });
  EXPECT_EQ(waiting_when(db, 1), 1);
  // The release wakes the waiter; this thread asks at once, before the waiter can run. The
  // slot is the waiter's: this thread queues behind it and, since the waiter keeps the
  // connection, gives up at its deadline.
  held.commit();
  EXPECT_EQ(kind_of([&] { db.begin(); }), DbError::Kind::unavailable);
  EXPECT_TRUE(waiter_got.load());
  let_go.set_value();
  waiter.join();
}

TEST_F(DbDatabase, WaitersAreServedInArrivalOrder) {
  Database db(pool_of(1, 5s));
  auto held = db.begin();
  std::mutex order_mu;
  std::vector<int> order;
  std::vector<std::thread> waiters;
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      auto tx = db.begin();
      std::lock_guard lock(order_mu);
      order.push_back(i);
    });
    // The next one starts only once this one waits, so arrival order is known.
    EXPECT_EQ(waiting_when(db, i + 1), i + 1);
  }
  held.commit();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(db.stats().waiting, 0);
  EXPECT_EQ(db.stats().in_use, 0);
}

TEST_F(DbDatabase, ReservedConnectionsServePriorityWorkOnly) {
  PoolOptions o = db_->options();
  o.max_connections = 3;
  o.reserved_for_priority = 1;
  o.acquire_timeout = 300ms;
  Database db(o);
  auto a = db.begin();
  auto b = db.begin();
  // Other work may not take the reserved connection...
  EXPECT_FALSE(PriorityScope::active());
  EXPECT_EQ(kind_of([&] { db.begin(); }), DbError::Kind::unavailable);
  EXPECT_EQ(db.stats().in_use, 2);
  {
    // ...work under a PriorityScope (agent heartbeats) may.
    PriorityScope scope;
    EXPECT_TRUE(PriorityScope::active());
    auto c = db.begin();
    EXPECT_EQ(c.exec("SELECT 1 AS one").int64(0, "one"), 1);
    EXPECT_EQ(db.stats().in_use, 3);
    // Every connection in use: a priority waiter is woken by the next release, which only it
    // may use (other work stays at two).
    std::atomic<bool> got{false};
    std::thread waiter([&] {
      PriorityScope own;
      auto tx = db.begin();
      got = true;
    });
    EXPECT_EQ(waiting_when(db, 1), 1);
    EXPECT_FALSE(got.load());
    c.commit();
    waiter.join();
    EXPECT_TRUE(got.load());
  }
  EXPECT_FALSE(PriorityScope::active());
  // Without a reservation (the default) other work may take every connection.
  PoolOptions plain = db_->options();
  plain.max_connections = 2;
  Database db2(plain);
  auto x = db2.begin();
  auto y = db2.begin();
  EXPECT_EQ(db2.stats().in_use, 2);
}

TEST_F(DbDatabase, TerminatedIdleConnectionIsReplacedTransparently) {
  std::string pid;
  {
    auto tx = db_->begin();
    pid = tx.exec("SELECT pg_backend_pid() AS pid").at(0, "pid");
    tx.commit();
  }
  ASSERT_EQ(db_->stats().idle, 1);
  testing::admin_exec(scratch_->conninfo(), "SELECT pg_terminate_backend(" + pid + ")");
  std::this_thread::sleep_for(100ms);
  // The idle connection is dead; the caller never sees it.
  auto tx = db_->begin();
  EXPECT_NE(tx.exec("SELECT pg_backend_pid() AS pid").at(0, "pid"), pid);
  tx.commit();
}

TEST_F(DbDatabase, ConnectionLostMidTransactionIsUnavailableAndDiscarded) {
  const uint64_t opened = db_->stats().connections_opened;
  EXPECT_EQ(kind_of([&] {
              auto tx = db_->begin();
              tx.exec("SELECT pg_terminate_backend(pg_backend_pid())");
            }),
            DbError::Kind::unavailable);
  EXPECT_EQ(db_->stats().idle, 0);
  EXPECT_EQ(db_->stats().in_use, 0);
  db_->transact([](Transaction& tx) { tx.exec("SELECT 1"); });
  EXPECT_EQ(db_->stats().connections_opened, opened + 1);
}

TEST_F(DbDatabase, PingAndClose) {
  EXPECT_TRUE(db_->ping());
  EXPECT_TRUE(db_->ping());
  db_->close();
  EXPECT_FALSE(db_->ping());
  EXPECT_EQ(kind_of([&] { db_->begin(); }), DbError::Kind::unavailable);
}

TEST_F(DbDatabase, UnreachableServerIsUnavailableQuickly) {
  PoolOptions o;
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  o.conninfo = "postgresql://postgres@127.0.0.1:1/podium";
  Database db(o);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(kind_of([&] { db.begin(); }), DbError::Kind::unavailable);
  EXPECT_FALSE(db.ping());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_THROW(Database(PoolOptions{.conninfo = "host=' unterminated"}), std::invalid_argument);
}

TEST_F(DbDatabase, TransactionMayOutliveTheDatabase) {
  auto db = std::make_unique<Database>(db_->options());
  auto tx = db->begin();
  tx.exec("INSERT INTO items (name) VALUES ('orphan')");
  db.reset();
  // The pool state lives on with the transaction; the rollback still happens.
  EXPECT_NO_THROW(tx.exec("SELECT 1"));
}

TEST_F(DbDatabase, ConcurrentTransactionsShareThePool) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        try {
          db_->transact([&](Transaction& tx) {
            tx.exec("INSERT INTO items (name, qty) VALUES ($1, $2)",
                    {"t" + std::to_string(t) + "-" + std::to_string(i), std::to_string(i)});
          });
        } catch (const DbError&) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(count_items(), 200);
  EXPECT_LE(db_->stats().connections_opened, 4u);
}

}  // namespace
}  // namespace podium::db
