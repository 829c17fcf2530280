#include "backend/db/conninfo.h"

#include <libpq-fe.h>

#include <memory>
#include <stdexcept>

namespace podium::db {
namespace {

struct OptionsDeleter {
  void operator()(PQconninfoOption* o) const { PQconninfoFree(o); }
};
using OptionsPtr = std::unique_ptr<PQconninfoOption, OptionsDeleter>;

OptionsPtr parse(const std::string& conninfo) {
  char* err = nullptr;
  OptionsPtr opts(PQconninfoParse(conninfo.c_str(), &err));
  if (!opts) {
    std::string message = err ? err : "out of memory";
    if (err) PQfreemem(err);
    while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
      message.pop_back();
    }
    throw std::invalid_argument("invalid database connection string: " + message);
  }
  return opts;
}

}  // namespace

void validate_conninfo(const std::string& conninfo) {
  parse(conninfo);
}

std::string conninfo_quote(std::string_view value) {
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  out += '\'';
  return out;
}

std::string conninfo_with(const std::string& conninfo,
                          const std::vector<std::pair<std::string, std::string>>& overrides) {
  OptionsPtr opts = parse(conninfo);
  std::string out;
  auto append = [&out](std::string_view key, std::string_view value) {
    if (!out.empty()) out += ' ';
    out += key;
    out += '=';
    out += conninfo_quote(value);
  };
  for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
    bool overridden = false;
    for (const auto& [key, value] : overrides) overridden = overridden || key == o->keyword;
    if (!overridden && o->val != nullptr) append(o->keyword, o->val);
  }
  for (const auto& [key, value] : overrides) append(key, value);
  return out;
}

std::string conninfo_for_log(const std::string& conninfo) {
  OptionsPtr opts;
  try {
    opts = parse(conninfo);
  } catch (const std::invalid_argument&) {
    return "(unparseable connection string)";
  }
  std::string out;
  for (PQconninfoOption* o = opts.get(); o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    if (!out.empty()) out += ' ';
    out += o->keyword;
    out += '=';
    out += std::string_view(o->keyword) == "password" ? std::string("***") : conninfo_quote(o->val);
  }
  return out;
}

}  // namespace podium::db
