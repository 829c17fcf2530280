#include "backend/notify/event_body.h"

namespace podium::notify {

namespace {

// Slack reads &, < and > as markup (links, mentions): escaped, the text shows as written.
std::string slack_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '\n' || c == '\r' || c == '\t')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string string_field(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string what_happened(const EventFacts& f) {
  const std::string cause = f.cause.size() > 300 ? f.cause.substr(0, 300) + "..." : f.cause;
  if (f.type == "run.started") return "started";
  if (f.type == "run.succeeded") {
    if (f.run.contains("last_step") && f.run["last_step"].is_number_integer())
      return "succeeded at step " + std::to_string(f.run["last_step"].get<long long>());
    return "succeeded";
  }
  if (f.type == "run.failed") {
    const std::string cls = string_field(f.run, "failure_class");
    return "failed" + (cls.empty() ? "" : " (" + cls + ")") + (cause.empty() ? "" : ": " + cause);
  }
  if (f.type == "run.refused") return "was refused" + (cause.empty() ? "" : ": " + cause);
  if (f.type == "run.stalled") return "stalled" + (cause.empty() ? "" : ": " + cause);
  if (f.type == "run.preempted") return "was preempted and is recovering";
  if (f.type == "run.recovered") return "recovered and is running again";
  // The cause carries both figures (backend/api/plan_check.cpp, underperforming_cause).
  if (f.type == "run.underperforming")
    return "is underperforming" + (cause.empty() ? std::string(" against its plan") : ": " + cause);
  return f.type;
}

}  // namespace

std::string event_text(const EventFacts& f) {
  const std::string id = string_field(f.run, "id");
  const std::string name = string_field(f.run, "name");
  std::string line = "Podium: run " + (name.empty() || name == id ? id : name + " (" + id + ")") +
                     " " + what_happened(f);
  line = slack_escape(line);
  if (!f.run_url.empty()) line += " <" + f.run_url + ">";  // a Slack link, kept as markup
  return line;
}

nlohmann::json event_body(const EventFacts& f) {
  return {{"id", f.event_id},
          {"type", f.type},
          {"created_at", f.created_at},
          {"run", f.run},
          {"text", event_text(f)}};
}

}  // namespace podium::notify
