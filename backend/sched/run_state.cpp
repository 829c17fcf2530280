#include "backend/sched/run_state.h"

#include <algorithm>
#include <array>
#include <utility>

namespace podium::sched {
namespace {

constexpr std::array<std::pair<RunState, std::string_view>, 8> kRunNames = {{
    {RunState::queued, "queued"},
    {RunState::starting, "starting"},
    {RunState::running, "running"},
    {RunState::recovering, "recovering"},
    {RunState::cancelling, "cancelling"},
    {RunState::succeeded, "succeeded"},
    {RunState::failed, "failed"},
    {RunState::cancelled, "cancelled"},
}};

constexpr std::array<std::pair<AttemptState, std::string_view>, 6> kAttemptNames = {{
    {AttemptState::pending, "pending"},
    {AttemptState::starting, "starting"},
    {AttemptState::running, "running"},
    {AttemptState::succeeded, "succeeded"},
    {AttemptState::failed, "failed"},
    {AttemptState::cancelled, "cancelled"},
}};

// The transition tables of the header.
constexpr std::array<std::pair<RunState, RunState>, 19> kRunEdges = {{
    {RunState::queued, RunState::starting},      {RunState::queued, RunState::cancelled},
    {RunState::queued, RunState::failed},        {RunState::starting, RunState::running},
    {RunState::starting, RunState::succeeded},   {RunState::starting, RunState::failed},
    {RunState::starting, RunState::recovering},  {RunState::starting, RunState::cancelling},
    {RunState::starting, RunState::queued},      {RunState::running, RunState::succeeded},
    {RunState::running, RunState::failed},       {RunState::running, RunState::recovering},
    {RunState::running, RunState::cancelling},   {RunState::recovering, RunState::starting},
    {RunState::recovering, RunState::failed},    {RunState::recovering, RunState::cancelling},
    {RunState::recovering, RunState::cancelled}, {RunState::cancelling, RunState::cancelled},
    {RunState::cancelling, RunState::succeeded},
}};

constexpr std::array<std::pair<AttemptState, AttemptState>, 10> kAttemptEdges = {{
    {AttemptState::pending, AttemptState::starting},
    {AttemptState::pending, AttemptState::cancelled},
    {AttemptState::pending, AttemptState::failed},
    {AttemptState::starting, AttemptState::running},
    {AttemptState::starting, AttemptState::succeeded},
    {AttemptState::starting, AttemptState::failed},
    {AttemptState::starting, AttemptState::cancelled},
    {AttemptState::running, AttemptState::succeeded},
    {AttemptState::running, AttemptState::failed},
    {AttemptState::running, AttemptState::cancelled},
}};

template <typename State, std::size_t N>
std::string_view name_of(const std::array<std::pair<State, std::string_view>, N>& names, State s) {
  for (const auto& [state, name] : names) {
    if (state == s) return name;
  }
  return "unknown";
}

template <typename State, std::size_t N>
std::optional<State> state_of(const std::array<std::pair<State, std::string_view>, N>& names,
                              std::string_view name) {
  for (const auto& [state, state_name] : names) {
    if (state_name == name) return state;
  }
  return std::nullopt;
}

template <typename State, std::size_t N>
bool has_edge(const std::array<std::pair<State, State>, N>& edges, State from, State to) {
  return std::find(edges.begin(), edges.end(), std::pair{from, to}) != edges.end();
}

}  // namespace

std::string_view to_string(RunState s) {
  return name_of(kRunNames, s);
}
std::string_view to_string(AttemptState s) {
  return name_of(kAttemptNames, s);
}
std::optional<RunState> parse_run_state(std::string_view name) {
  return state_of(kRunNames, name);
}
std::optional<AttemptState> parse_attempt_state(std::string_view name) {
  return state_of(kAttemptNames, name);
}

bool is_terminal(RunState s) {
  return s == RunState::succeeded || s == RunState::failed || s == RunState::cancelled;
}

bool is_terminal(AttemptState s) {
  return s == AttemptState::succeeded || s == AttemptState::failed || s == AttemptState::cancelled;
}

bool is_terminal_run_state(std::string_view name) {
  const auto s = parse_run_state(name);
  return s && is_terminal(*s);
}

bool can_transition(RunState from, RunState to) {
  if (from == to || is_terminal(from)) return false;
  return has_edge(kRunEdges, from, to);
}

bool can_transition(AttemptState from, AttemptState to) {
  if (from == to || is_terminal(from)) return false;
  return has_edge(kAttemptEdges, from, to);
}

const std::vector<RunState>& all_run_states() {
  static const std::vector<RunState> states = [] {
    std::vector<RunState> v;
    for (const auto& [state, name] : kRunNames) v.push_back(state);
    return v;
  }();
  return states;
}

const std::vector<AttemptState>& all_attempt_states() {
  static const std::vector<AttemptState> states = [] {
    std::vector<AttemptState> v;
    for (const auto& [state, name] : kAttemptNames) v.push_back(state);
    return v;
  }();
  return states;
}

std::vector<RunState> next_states(RunState from) {
  std::vector<RunState> out;
  for (RunState to : all_run_states()) {
    if (can_transition(from, to)) out.push_back(to);
  }
  return out;
}

std::vector<AttemptState> next_states(AttemptState from) {
  std::vector<AttemptState> out;
  for (AttemptState to : all_attempt_states()) {
    if (can_transition(from, to)) out.push_back(to);
  }
  return out;
}

}  // namespace podium::sched
