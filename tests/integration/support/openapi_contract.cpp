#include "tests/integration/support/openapi_contract.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "engine/cli/run_spec.h"
#include "tests/integration/support/env.h"

namespace podium::it {

namespace {

using nlohmann::json;

// Statuses the document's conventions ("Errors") let any request get, as problem+json.
const std::set<int>& any_request_statuses() {
  static const std::set<int> s = {400, 404, 405, 409, 413, 422, 431, 500, 503};
  return s;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string media_type(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  while (!t.empty() && t.back() == ' ') t.pop_back();
  for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return t;
}

bool is_json_media_type(const std::string& t) {
  return t == "application/json" || (t.size() > 5 && t.compare(t.size() - 5, 5, "+json") == 0);
}

std::atomic<long> tally_checked{0}, tally_unchecked{0}, tally_failed{0};

// With PODIUM_CONTRACT_TALLY_FILE set, each test process appends "checked unchecked failed" at
// exit, so that a whole ctest run (one process per test) can be summed.
struct TallyWriter {
  ~TallyWriter() {
    const char* file = std::getenv("PODIUM_CONTRACT_TALLY_FILE");
    if (!file || !*file || tally_checked + tally_unchecked == 0) return;
    if (FILE* f = std::fopen(file, "a")) {
      std::fprintf(f, "%ld %ld %ld\n", tally_checked.load(), tally_unchecked.load(),
                   tally_failed.load());
      std::fclose(f);
    }
  }
} tally_writer;

}  // namespace

json load_openapi_yaml(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file);
  std::stringstream text;
  text << in.rdbuf();
  auto converted = cli::yaml_to_json(text.str());
  if (!converted.value) throw std::runtime_error(file + ": " + converted.error);
  return json::parse(converted.value->dump());
}

OpenApiContract::OpenApiContract(json document) : schemas_(std::move(document)) {}

const OpenApiContract& OpenApiContract::shared() {
  static const OpenApiContract contract(
      load_openapi_yaml((repo_root() / "docs" / "openapi.yaml").string()));
  return contract;
}

const json* OpenApiContract::find_path(const std::string& path) const {
  const auto want = split_path(path);
  const json* best = nullptr;
  int best_literals = -1;
  for (const auto& [templ, item] : schemas_.document()["paths"].items()) {
    const auto have = split_path(templ);
    if (have.size() != want.size()) continue;
    int literals = 0;
    bool match = true;
    for (size_t i = 0; i < have.size() && match; ++i) {
      const bool param = have[i].size() > 2 && have[i].front() == '{' && have[i].back() == '}';
      if (param)
        match = !want[i].empty();
      else if ((match = have[i] == want[i]))
        ++literals;
    }
    // "/runs/import" is more specific than "/runs/{id}".
    if (match && literals > best_literals) {
      best = &item;
      best_literals = literals;
    }
  }
  return best;
}

const json& OpenApiContract::deref(const json& node) const {
  const json* n = &node;
  for (int i = 0; i < 8 && n->is_object() && n->contains("$ref"); ++i)
    n = &schemas_.document().at(json::json_pointer((*n)["$ref"].get<std::string>().substr(1)));
  return *n;
}

ContractVerdict OpenApiContract::check(const std::string& method, const std::string& target,
                                       int status, const std::string& content_type,
                                       const std::string& body) const {
  ContractVerdict v;
  const std::string path = target.substr(0, target.find('?'));
  const bool api = path.rfind("/api/", 0) == 0;
  const json* item = find_path(path);
  if (!item && !api) return v;  // the dashboard's files
  v.checked = true;
  const std::string verb = method == "HEAD" ? "get" : [&] {
    std::string m = method;
    for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return m;
  }();
  const json* operation = item && item->contains(verb) ? &(*item)[verb] : nullptr;
  v.operation = operation ? (*operation).value("operationId", verb + " " + path)
                : item    ? "(method not documented)"
                          : "(unknown path)";
  const std::string code = std::to_string(status);
  const json* response = nullptr;
  if (operation && (*operation)["responses"].contains(code))
    response = &deref((*operation)["responses"][code]);
  else if (operation && (*operation)["responses"].contains("default"))
    response = &deref((*operation)["responses"]["default"]);
  else if (any_request_statuses().count(status))
    response = &deref(json{{"$ref", status == 503 ? "#/components/responses/Unavailable"
                                                  : "#/components/responses/BadRequest"}});
  if (!response) {
    v.errors.push_back("status " + code + " is not documented for " + v.operation);
    return v;
  }
  check_response(*response, method == "HEAD", status, content_type, body, v.errors);
  return v;
}

ContractVerdict OpenApiContract::check_event(const std::string& target, const std::string& event,
                                             const std::string& data) const {
  ContractVerdict v;
  v.checked = true;
  const std::string path = target.substr(0, target.find('?'));
  const json* item = find_path(path);
  const json* operation = item && item->contains("get") ? &(*item)["get"] : nullptr;
  v.operation = operation ? (*operation).value("operationId", "get " + path) : "(unknown path)";
  const json* events = nullptr;
  if (operation && (*operation)["responses"].contains("200")) {
    const json& ok = deref((*operation)["responses"]["200"]);
    if (ok.contains("content") && ok["content"].contains("text/event-stream"))
      events = ok["content"]["text/event-stream"].contains("x-podium-events")
                   ? &ok["content"]["text/event-stream"]["x-podium-events"]
                   : nullptr;
  }
  if (!events) {
    v.errors.push_back("no event stream with x-podium-events is documented for " + v.operation);
    return v;
  }
  if (event == "description" || !events->contains(event)) {
    v.errors.push_back("event '" + event + "' is not documented");
    return v;
  }
  const json instance = json::parse(data, nullptr, false);
  if (instance.is_discarded()) {
    v.errors.push_back("the data of event '" + event + "' is not JSON");
    return v;
  }
  for (auto& e : schemas_.validate(instance, (*events)[event]))
    v.errors.push_back("event '" + event + "': " + e);
  return v;
}

void OpenApiContract::check_response(const json& response, bool head, int status,
                                     const std::string& content_type, const std::string& body,
                                     std::vector<std::string>& errors) const {
  if (!response.contains("content")) {
    if (!body.empty())
      errors.push_back("status " + std::to_string(status) +
                       " is documented without a body, and one came");
    return;
  }
  const std::string type = media_type(content_type);
  const json* media = nullptr;
  for (const auto& [declared, m] : response["content"].items())
    if (media_type(declared) == type) media = &m;
  if (!media) {
    std::string declared;
    for (const auto& [d, m] : response["content"].items())
      declared += (declared.empty() ? "" : ", ") + d;
    errors.push_back("Content-Type '" + content_type + "' is not documented (" + declared + ")");
    return;
  }
  if (head || !is_json_media_type(type) || !media->contains("schema")) return;
  const json instance = json::parse(body, nullptr, false);
  if (instance.is_discarded()) {
    errors.push_back("the body is not JSON");
    return;
  }
  for (auto& e : schemas_.validate(instance, (*media)["schema"])) errors.push_back(std::move(e));
}

ContractTally contract_tally() {
  return {tally_checked.load(), tally_unchecked.load(), tally_failed.load()};
}

void count_contract_verdict(const ContractVerdict& v) {
  (v.checked ? tally_checked : tally_unchecked)++;
  if (!v.errors.empty()) tally_failed++;
}

}  // namespace podium::it
