// SQLSTATE classification and connection-string helpers: no database needed.
#include "backend/db/errors.h"

#include <gtest/gtest.h>

#include "backend/db/conninfo.h"

namespace podium::db {
namespace {

using K = DbError::Kind;

TEST(DbSqlstateKind, RetryableTransactions) {
  EXPECT_EQ(kind_for_sqlstate("40001"), K::retryable);
  EXPECT_EQ(kind_for_sqlstate("40P01"), K::retryable);
  // Other class 40 codes (e.g. a transaction rolled back for integrity) are not retried.
  EXPECT_EQ(kind_for_sqlstate("40002"), K::other);
}

TEST(DbSqlstateKind, IntegrityViolations) {
  EXPECT_EQ(kind_for_sqlstate("23505"), K::unique_violation);
  EXPECT_EQ(kind_for_sqlstate("23P01"), K::unique_violation);
  EXPECT_EQ(kind_for_sqlstate("23503"), K::foreign_key);
  EXPECT_EQ(kind_for_sqlstate("23514"), K::check_violation);
  EXPECT_EQ(kind_for_sqlstate("23502"), K::check_violation);
}

TEST(DbSqlstateKind, DataExceptionsAreCheckViolations) {
  EXPECT_EQ(kind_for_sqlstate("22P02"), K::check_violation);  // invalid text representation
  EXPECT_EQ(kind_for_sqlstate("22001"), K::check_violation);  // string too long
  EXPECT_EQ(kind_for_sqlstate("22012"), K::check_violation);  // division by zero
}

TEST(DbSqlstateKind, TimeoutsAndUnavailability) {
  EXPECT_EQ(kind_for_sqlstate("57014"), K::timeout);
  EXPECT_EQ(kind_for_sqlstate("55P03"), K::timeout);
  EXPECT_EQ(kind_for_sqlstate("08006"), K::unavailable);
  EXPECT_EQ(kind_for_sqlstate("08001"), K::unavailable);
  EXPECT_EQ(kind_for_sqlstate("57P01"), K::unavailable);
  EXPECT_EQ(kind_for_sqlstate("57P02"), K::unavailable);
  EXPECT_EQ(kind_for_sqlstate("57P03"), K::unavailable);
  EXPECT_EQ(kind_for_sqlstate("53300"), K::unavailable);
}

TEST(DbSqlstateKind, EverythingElseIsOther) {
  EXPECT_EQ(kind_for_sqlstate("42601"), K::other);  // syntax error
  EXPECT_EQ(kind_for_sqlstate("42P01"), K::other);  // undefined table
  EXPECT_EQ(kind_for_sqlstate("25006"), K::other);  // read-only transaction
  EXPECT_EQ(kind_for_sqlstate(""), K::other);
  EXPECT_EQ(kind_for_sqlstate("2350"), K::other);
  EXPECT_EQ(kind_name(K::unique_violation), "unique_violation");
  EXPECT_EQ(kind_name(K::unavailable), "unavailable");
}

TEST(DbConninfo, OverridesKeywordsInBothForms) {
  const std::string from_url =
      conninfo_with("postgresql://postgres@127.0.0.1:5433/podium_test", {{"dbname", "podium_t_1"}});
  for (const char* part :
       {"user='postgres'", "host='127.0.0.1'", "port='5433'", "dbname='podium_t_1'"}) {
    EXPECT_NE(from_url.find(part), std::string::npos) << from_url;
  }
  EXPECT_EQ(from_url.find("podium_test"), std::string::npos) << from_url;
  EXPECT_EQ(conninfo_with("host=/run/pg dbname=x", {{"dbname", "y"}, {"user", "u"}}),
            "host='/run/pg' dbname='y' user='u'");
}

TEST(DbConninfo, QuotesAndValidates) {
  EXPECT_EQ(conninfo_quote("a b'c\\d"), "'a b\\'c\\\\d'");
  EXPECT_EQ(conninfo_with(std::string("host=") + conninfo_quote("/tmp/with space"), {}),
            "host='/tmp/with space'");
  EXPECT_NO_THROW(validate_conninfo(""));
  EXPECT_NO_THROW(validate_conninfo("postgresql:///podium?host=/var/run"));
  EXPECT_THROW(validate_conninfo("host"), std::invalid_argument);
  EXPECT_THROW(validate_conninfo("nosuchkeyword=1"), std::invalid_argument);
}

TEST(DbConninfo, LogFormHidesThePassword) {
  const std::string s = conninfo_for_log("postgresql://app:s3cret@db.example:5432/podium");
  EXPECT_EQ(s.find("s3cret"), std::string::npos) << s;
  EXPECT_NE(s.find("password=***"), std::string::npos) << s;
  EXPECT_NE(s.find("db.example"), std::string::npos) << s;
}

}  // namespace
}  // namespace podium::db
