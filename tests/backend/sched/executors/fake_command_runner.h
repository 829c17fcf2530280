#pragma once
// A CommandRunner for the executors' unit tests: records every command and answers from a queue
// (an empty queue answers success with no output).

#include <deque>
#include <string>
#include <vector>

#include "backend/sched/executors/command_runner.h"

namespace podium::sched {

class FakeRunner : public CommandRunner {
 public:
  std::vector<CommandSpec> calls;
  std::deque<CommandResult> answers;
  CommandResult run(const CommandSpec& spec) override {
    calls.push_back(spec);
    if (answers.empty()) return CommandResult{true, false, 0, 0, "", ""};
    auto r = answers.front();
    answers.pop_front();
    return r;
  }
};

}  // namespace podium::sched
