#pragma once
// A state change the state machines of backend/sched/run_state.h do not allow, asked of the
// lifecycle writer: a bug in its caller, never an answer to input. It is thrown, so the
// transaction rolls back and the error is logged, instead of a row taking a state no reader
// expects.

#include <stdexcept>
#include <string>

namespace podium::sched {

class IllegalTransition : public std::logic_error {
 public:
  IllegalTransition(const std::string& what, const std::string& id, const std::string& from,
                    const std::string& to)
      : std::logic_error("illegal " + what + " transition of " + id + ": " + from + " -> " + to) {}
};

}  // namespace podium::sched
